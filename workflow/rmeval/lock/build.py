"""Build `results/lock.yaml` from a finished run: every score sidecar (models, software) and the benchmarks'
sections, each built by its provider from the files it is handed.

Nothing time- or machine-dependent goes in (no timestamps, no wall times), so two identical runs write
byte-identical locks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.lock.lockfile import Lock, ModelLock
from rmeval.lock.section import section_providers

# flash-attn only when installed: it changes the numbers of models loaded with attn_implementation flash_attention_2.
SOFTWARE = ("python", "torch", "transformers", "tokenizers", "flash-attn")
# Sidecar fields recorded when present (other stages add them), top-level or under `adapter_details`:
# lock key -> the sidecar names it may have. A scalar, or {"<benchmark>/<table>": value} when the tables differ.
OPTIONAL_MODEL_FIELDS = {
    "template_hash": ("template_hash", "chat_template_sha256"),
    "prompt_hash": ("prompt_hash", "prompt_sha256"),
    "attn_implementation": ("attn_implementation",),
    "published_sha256": ("published_sha256",),  # the file a published model's results were read from
    "earlier_run_model": ("earlier_run_model",),  # an earlier run's model, as that run's lock recorded it
    "engine": ("engine_version",),  # `vllm 0.32.0` for the vLLM engine (rmeval.vllm_engine.scorer); none: transformers
}
# A model's identity: every sidecar of one model must agree on these.
MODEL_IDENTITY = ("adapter", "path", "revision", "dtype")
Metas = Mapping[str, Iterable[str | Path]]  # benchmark -> its score sidecars


def _table_key(benchmark: str, path: Path) -> str:
    """`<benchmark>/<table>`: the benchmark that handed the sidecar over, and the sidecar's table."""
    return f"{benchmark}/{path.name.removesuffix('.meta.json')}"


def _optional(meta: dict[str, Any], names: tuple[str, ...]) -> Any:
    details = meta.get("adapter_details") if isinstance(meta.get("adapter_details"), dict) else {}
    for name in names:
        for where in (meta, details):
            if where.get(name) is not None:
                return where[name]
    return None


def _sidecars(metas: Metas) -> list[tuple[Path, str]]:
    """(path, benchmark) of every sidecar, by path (the order the checks below name them in)."""
    return sorted((Path(path), benchmark) for benchmark, paths in metas.items() for path in paths)


def model_locks(metas: Metas) -> dict[str, ModelLock]:
    by_model: dict[str, list[tuple[Path, str, dict[str, Any]]]] = {}
    for path, benchmark in _sidecars(metas):
        meta = json.loads(path.read_text(encoding="utf-8"))
        by_model.setdefault(str(meta.get("model") or path.parent.name), []).append((path, benchmark, meta))
    locks: dict[str, ModelLock] = {}
    for name in sorted(by_model):
        sidecars = by_model[name]
        first_path, _, first = sidecars[0]
        for key in MODEL_IDENTITY:
            for path, _, meta in sidecars[1:]:
                if meta.get(key) != first.get(key):
                    raise RmevalError(
                        f"model {name!r}: {first_path} has {key} {first.get(key)!r} but {path} has "
                        f"{meta.get(key)!r}; one lock entry needs one model (pin `revision`, rerun its jobs)"
                    )
        extra: dict[str, Any] = {}
        for key, names in OPTIONAL_MODEL_FIELDS.items():
            values = {_table_key(benchmark, path): value for path, benchmark, meta in sidecars
                      if (value := _optional(meta, names)) is not None}
            if not values:
                continue
            distinct = {json.dumps(value, sort_keys=True) for value in values.values()}
            extra[key] = next(iter(values.values())) if len(distinct) == 1 else dict(sorted(values.items()))
        locks[name] = ModelLock(
            name, str(first.get("adapter")), str(first.get("path")), str(first.get("revision")),
            str(first.get("dtype")), extra,
        )
    return locks


def software_versions(metas: Metas) -> dict[str, Any]:
    """Versions the scoring jobs ran with (their sidecars), else this environment's."""
    import importlib.metadata as metadata
    import platform

    seen: dict[str, set[str]] = {package: set() for package in SOFTWARE}
    for path, _ in _sidecars(metas):
        versions = json.loads(path.read_text(encoding="utf-8")).get("versions") or {}
        for package in SOFTWARE:
            if versions.get(package):
                seen[package].add(str(versions[package]))
    software: dict[str, Any] = {}
    for package in SOFTWARE:
        if not seen[package]:
            try:
                seen[package].add(platform.python_version() if package == "python" else metadata.version(package))
            except metadata.PackageNotFoundError:
                continue
        values = sorted(seen[package])
        software[package] = values[0] if len(values) == 1 else values
    return software


def build_lock(config_sha256: str, metas: Metas, sections: Mapping[str, Any]) -> Lock:
    """The lock of a run: `sections` hands each benchmark's provider its inputs (benchmark -> inputs); the
    sections are written in catalogue order whatever the order of `sections`."""
    from rmeval import __version__

    providers = section_providers()
    unknown = sorted(set(sections) - set(providers))
    if unknown:
        raise RmevalError(f"lock sections: no lock section provider for {', '.join(map(repr, unknown))} "
                          f"(benchmarks with one: {', '.join(providers) or 'none'})")
    return Lock(
        rmeval=__version__,
        software=software_versions(metas),
        config_sha256=config_sha256,
        sections={name: provider.build(sections[name]) for name, provider in providers.items() if name in sections},
        models=model_locks(metas),
    )
