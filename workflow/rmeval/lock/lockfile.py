"""The lock's format: dataclasses, a deterministic YAML writer and a reader whose errors name the key.

The shared part is the run's: rmeval version, software, the config's hash and the models. Every other top-level
key is a benchmark's section (rmeval.lock.section), written between `config_sha256` and `models` in catalogue
order; the header names what the sections lock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.io.hashing import sha256_text
from rmeval.lock.section import SectionRecord, header, require, section_providers

LOCK_FORMAT = 1


@dataclass(frozen=True)
class ModelLock:
    name: str
    adapter: str
    path: str
    revision: str  # the hub commit loaded, a local folder's fingerprint, `api:<model>`, a baseline's rule, or
    # `published:<origin>` (a published file; its `published_sha256` in `extra`)
    dtype: str
    # Optional fields a meta sidecar may carry (template_hash, prompt_hash, ...): a value, or
    # {"<benchmark>/<table>": value}.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_hub(self) -> bool:
        return not self.revision.startswith(("local-sha256:", "api:", "baseline:", "published:", "unresolved"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "path": self.path,
            "revision": self.revision,
            "dtype": self.dtype,
            **{key: self.extra[key] for key in sorted(self.extra)},
        }


@dataclass(frozen=True)
class Lock:
    rmeval: str
    software: dict[str, Any]
    config_sha256: str
    sections: dict[str, SectionRecord]  # benchmark -> its provider's record, in catalogue order
    models: dict[str, ModelLock]

    def section(self, benchmark: str) -> SectionRecord | None:
        return self.sections.get(benchmark)

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "lock_format": LOCK_FORMAT,
            "rmeval": self.rmeval,
            "software": {key: self.software[key] for key in sorted(self.software)},
            "config_sha256": self.config_sha256,
        }
        for record in self.sections.values():
            document.update(record.to_dict())
        document["models"] = {name: self.models[name].to_dict() for name in sorted(self.models)}
        return document

    def to_yaml(self) -> str:
        import yaml

        providers = section_providers()
        body = yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False, allow_unicode=True,
                              width=120)
        return header([providers[name] for name in self.sections], list(self.sections.values())) + body

    def sha256(self) -> str:
        return sha256_text(self.to_yaml())


def config_sha256(config: dict[str, Any]) -> str:
    """Hash of the resolved config (what Snakemake saw, overrides included), canonical JSON."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return sha256_text(text)


def parse_lock(document: Any, where: str) -> Lock:
    if not isinstance(document, dict):
        raise RmevalError(f"{where}: not a lock (expected a mapping)")
    fmt = document.get("lock_format")
    if fmt != LOCK_FORMAT:
        raise RmevalError(f"{where}: lock_format {fmt!r} is not {LOCK_FORMAT} (written by another rmeval version?)")
    sections = {
        name: provider.parse(document, where)
        for name, provider in section_providers().items()
        if any(key in document for key in provider.keys)
    }
    models: dict[str, ModelLock] = {}
    for name, raw in (document.get("models") or {}).items():
        at = f"{where}: models.{name}"
        known = {"adapter", "path", "revision", "dtype"}
        models[str(name)] = ModelLock(
            str(name),
            require(raw, "adapter", str, at),
            require(raw, "path", str, at),
            require(raw, "revision", str, at),
            require(raw, "dtype", str, at),
            {key: value for key, value in raw.items() if key not in known},
        )
    return Lock(
        rmeval=str(document.get("rmeval", "")),
        software=dict(document.get("software") or {}),
        config_sha256=str(document.get("config_sha256", "")),
        sections=sections,
        models=models,
    )


def load_lock(path: str | Path) -> Lock:
    import yaml

    from rmeval.io.yaml_io import load_yaml

    path = Path(path)
    if not path.is_file():
        raise RmevalError(f"lock file not found: {path} (config key `lock`)")
    try:
        document = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise RmevalError(f"{path}: not valid YAML: {error}") from error
    return parse_lock(document, str(path))
