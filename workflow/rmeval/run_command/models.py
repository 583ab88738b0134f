"""`--model PATH_OR_HUB_ID [--name NAME]` and `--baseline KIND` as the config's model entries, without the user
writing one.

- A registry name, or a hub id that is a registry entry's `path`: that entry (a `--name` copies it under the name).
- A local folder, or a hub id the registry does not know: an inline entry whose adapter comes from its config.json
  (a `*ForSequenceClassification` with one label is `sequence-classification`; anything else is refused in one line
  naming what was found and the registry keys to write), its dtype and GPU from this machine (bf16 on a GPU, fp32
  on a CPU; `auto` and one GPU when the jobs run on a Slurm cluster's nodes), `max_length` within the model's
  positions.
- Its name: `--name`, else the folder's or the id's last part, made valid (rmeval.registry.valid_model_name).

Every problem is one line, found before anything is written: a path that does not exist, a hub id that is neither
cached nor reachable, a config.json no adapter can be read from, two models with one name.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.built_models import TINY_CARD
from rmeval.errors import RmevalError
from rmeval.hub import LOCAL_PREFIXES
from rmeval.registry import DEFAULT_ADAPTER, ModelSpec, entry_defaults, valid_model_name

# An "org/name" hub id (a bare name is a registry name or a folder; two slashes are a path).
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+")
CLASSIFIER_SUFFIX = "ForSequenceClassification"
CAUSAL_SUFFIX = "ForCausalLM"
# Memory of a scoring job of a local folder: the weights twice over (a bf16 checkpoint in fp32 on a CPU) and room
# for activations, at least this much (MB).
MEMORY_FLOOR_MB = 2000
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
BASELINE_SUFFIX = "-baseline"  # `--baseline KIND` is the registry entry `KIND-baseline`


@dataclass
class ModelArg:
    """One `--model` as given, with the `--name` that followed it."""

    source: str
    name: str | None = None


@dataclass(frozen=True)
class Machine:
    """Where the scoring jobs run: this machine's GPUs, or a Slurm cluster's nodes (`--profile slurm`)."""

    gpus: int
    cluster: bool = False

    @property
    def dtype(self) -> str:
        if self.cluster:
            return "auto"  # bf16 on the node's GPU, decided there
        return "bfloat16" if self.gpus else "float32"

    @property
    def gpu(self) -> int:
        return 1 if self.cluster or self.gpus else 0

    def describe(self) -> str:
        if self.cluster:
            return "a Slurm node's GPU (dtype auto)"
        return f"{'a GPU, bf16' if self.gpus else 'the CPU, fp32'} (this machine)"


@dataclass(frozen=True)
class Resolved:
    """A model of the run: its config entry (a registry name, or an inline entry), its name, and how it was found."""

    name: str
    entry: str | dict[str, Any]
    given: str  # `--model X` / `--baseline K`, for messages
    how: str


@dataclass
class HubAccess:
    """Whether the Hugging Face hub may be asked, decided once for the command (preflight's own checks and words)."""

    _blocked: str | None = None
    _asked: bool = False

    def blocked(self) -> str | None:
        if not self._asked:
            from rmeval import preflight
            from rmeval.hub import hub_offline

            self._asked = True
            if hub_offline():
                self._blocked = "HF_HUB_OFFLINE is set"
            else:
                hub = preflight.hub_endpoint()
                reason = preflight.reachability([hub])[hub]
                self._blocked = f"{preflight.endpoint(hub)[0]} is unreachable ({reason})" if reason else None
        return self._blocked


@dataclass
class Registry:
    """The registry the run names: the shipped one (`registry:`) plus, with `--set registry=FILE`, the user's
    entries (`added`); its specs, and its entries as written (for a `--name` copy, and to inline the user's
    entries: the config keeps the shipped registry, so that every rule reads the entries it knew)."""

    path: Path
    specs: Mapping[str, ModelSpec]
    written: Mapping[str, Any] = field(default_factory=dict)
    added: Path | None = None  # the user's registry file, whose entries are written inline
    added_names: frozenset[str] = frozenset()

    @classmethod
    def load(cls, path: Path, added: Path | None = None) -> Registry:
        """The registry at `path`, plus the entries of `added` (a name in both is an error naming both files)."""
        from rmeval.io.yaml_io import load_yaml
        from rmeval.registry import load_registry

        specs = dict(load_registry(path))
        written = dict((load_yaml(path.read_text(encoding="utf-8")) or {})["models"])
        if added is None or added.resolve() == path.resolve():
            return cls(path, specs, written)
        extra = load_registry(added)
        clash = sorted(set(extra) & set(specs))
        if clash:
            raise RmevalError(f"{added}: {', '.join(clash)} {'is' if len(clash) == 1 else 'are'} also in the shipped "
                              f"registry {path}; give {'it' if len(clash) == 1 else 'them'} another name in {added} "
                              "(`--set registry=FILE` adds its entries to the shipped ones)")
        extra_written = (load_yaml(added.read_text(encoding="utf-8")) or {})["models"]
        return cls(path, {**specs, **extra}, {**written, **extra_written}, added, frozenset(extra))

    def named_by_path(self, hub_id: str) -> list[str]:
        return [name for name, spec in self.specs.items() if spec.path == hub_id]

    def baselines(self) -> list[str]:
        """The KINDs of `--baseline KIND`: its baseline entries named `KIND-baseline`."""
        from rmeval.models.catalogue import is_baseline

        return [name.removesuffix(BASELINE_SUFFIX) for name, spec in self.specs.items()
                if name.endswith(BASELINE_SUFFIX) and is_baseline(spec)]


def _closest(word: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _looks_like_path(source: str) -> bool:
    return source.startswith(LOCAL_PREFIXES) or HUB_ID.fullmatch(source) is None


def labels_of(config: Mapping[str, Any]) -> int:
    """The classifier's label count as transformers reads it: `id2label`'s entries, else `num_labels`, else 2."""
    if config.get("id2label"):
        return len(config["id2label"])
    return int(config.get("num_labels") or 2)


def adapter_of(config: Mapping[str, Any], given: str, name: str, path: str, registry: Registry) -> str:
    """The adapter of a model the registry does not know, from its config.json; else one line saying what was found
    and the registry keys to write."""
    from rmeval.models.catalogue import ADAPTERS

    architectures = [str(item) for item in config.get("architectures") or []]
    classifier = any(item.endswith(CLASSIFIER_SUFFIX) for item in architectures)
    if classifier and labels_of(config) == 1:
        return DEFAULT_ADAPTER
    found = (f"{'/'.join(architectures)} with {labels_of(config)} labels" if classifier
             else "/".join(architectures) or "no `architectures`")
    # A causal LM is read at one vocabulary logit (`first-token-logit`); anything else by the classifier's first
    # label (what `sequence-classification` reads, rmeval.models.hf). Both load as written, with no options.
    suggested = "first-token-logit" if any(item.endswith(CAUSAL_SUFFIX) for item in architectures) else DEFAULT_ADAPTER
    snippet = f"models: {{{name}: {{path: {json.dumps(path)}, adapter: {suggested}}}}}"
    raise RmevalError(
        f"{given}: its config.json names {found}, not a *{CLASSIFIER_SUFFIX} with one label, so rmeval cannot tell "
        f"which adapter scores it; write a registry file holding `{snippet}` (check that {suggested} reads what the "
        f"model card scores; other adapters: {', '.join(sorted(ADAPTERS))}) and run `rmeval run --set "
        f"registry=FILE --model {name}` (its entries are added to the shipped ones; the keys: README \"Adding a "
        f"reward model\", `rmeval models`; {registry.path} holds examples)")


def _memory_mb(folder: Path) -> int:
    weights = sum(path.stat().st_size for path in folder.iterdir() if path.suffix in WEIGHT_SUFFIXES)
    return max(MEMORY_FLOOR_MB, 1000 * math.ceil((2 * weights / 1e6 + MEMORY_FLOOR_MB) / 1000))


def inline_entry(name: str, path: str, config: Mapping[str, Any], machine: Machine,
                 memory_mb: int | None) -> dict[str, Any]:
    """An inline classifier entry: the machine's dtype and GPU, `max_length` within the model's positions."""
    max_length = entry_defaults()["max_length"]
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0:
        max_length = min(max_length, positions)
    resources: dict[str, Any] = {"gpu": machine.gpu}
    if memory_mb is not None:
        resources["mem_mb"] = memory_mb
    return {"name": name, "path": path, "adapter": DEFAULT_ADAPTER, "dtype": machine.dtype,
            "max_length": max_length, "resources": resources}


def _name(arg: ModelArg, derived: str) -> str:
    if arg.name is None:
        return valid_model_name(derived)
    if arg.name != valid_model_name(arg.name):
        raise RmevalError(f"--name {arg.name!r}: a model name is letters, digits, `.`, `_` and `-`; e.g. "
                          f"`{valid_model_name(arg.name)}`")
    return arg.name


def _from_registry(arg: ModelArg, registry_name: str, registry: Registry, hub: HubAccess) -> Resolved:
    spec = registry.specs[registry_name]
    given = f"--model {arg.source}"
    if spec.adapter_entry.loads_model:  # an endpoint or a baseline has no weights to find
        _check_hub_model(given, f"the registry's {registry_name} ({spec.path})", spec.path, spec.revision, hub)
    name = _name(arg, registry_name)
    entry: str | dict[str, Any] = registry_name
    if name != registry_name or registry_name in registry.added_names:  # a copy, or an entry the config inlines
        entry = {**registry.written[registry_name], "name": name}
    whose = f"{registry.added}'s" if registry_name in registry.added_names else "the registry's"
    return Resolved(name, entry, given, f"{whose} {registry_name} ({spec.adapter}, {spec.path})")


def _check_hub_model(given: str, subject: str, path: str, revision: str | None, hub: HubAccess) -> None:
    """A hub model must be in the Hugging Face cache at its revision, or the hub must answer."""
    from rmeval import preflight
    from rmeval.hub import looks_local

    if looks_local(path) or preflight.model_in_cache(path, revision):
        return
    blocked = hub.blocked()
    if blocked:
        raise RmevalError(
            f"{given}: {subject} is not in the Hugging Face cache ({preflight.hub_cache_dir()}) at revision "
            f"{revision or 'main'}, and {blocked}; download it where there is network (`hf download {path}` into "
            "this HF_HOME) or pass its local folder")


def _from_folder(arg: ModelArg, folder: Path, registry: Registry, machine: Machine) -> Resolved:
    given = f"--model {arg.source}"
    if not folder.is_dir():
        raise RmevalError(f"{given}: {arg.source} is a file, not a model folder (one that holds config.json)")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise RmevalError(f"{given}: {arg.source} holds no config.json (a folder written by save_pretrained or "
                          f"`hf download <repo> --local-dir <folder>`)")
    config = _read_config(config_file, given)
    path = str(folder.resolve())
    name = _name(arg, folder.resolve().name)
    adapter_of(config, given, name, path, registry)
    entry = inline_entry(name, path, config, machine, _memory_mb(folder))
    return Resolved(name, entry, given, f"local folder, {_found(config)} -> {DEFAULT_ADAPTER}, {machine.describe()}")


def _from_hub(arg: ModelArg, registry: Registry, machine: Machine, hub: HubAccess) -> Resolved:
    given = f"--model {arg.source}"
    _check_hub_model(given, f"no folder here, and the hub id {arg.source}", arg.source, None, hub)
    config = _read_config(Path(_hub_config_file(arg.source, given)), given)
    name = _name(arg, arg.source.rsplit("/", 1)[-1])
    adapter_of(config, given, name, arg.source, registry)
    entry = inline_entry(name, arg.source, config, machine, None)
    return Resolved(name, entry, given, f"hub id (main), {_found(config)} -> {DEFAULT_ADAPTER}, {machine.describe()}")


def _hub_config_file(hub_id: str, given: str) -> str:
    """The model's config.json from the cache, else from the hub (one small file)."""
    from huggingface_hub import hf_hub_download, try_to_load_from_cache

    cached = try_to_load_from_cache(hub_id, "config.json")
    if isinstance(cached, str):
        return cached
    try:
        return hf_hub_download(hub_id, "config.json")
    except Exception as error:  # a missing or gated repo, a network error: one line naming it
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RmevalError(f"{given}: cannot read its config.json from the Hugging Face hub ({reason})") from None


def _read_config(path: Path, given: str) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RmevalError(f"{given}: cannot read {path} ({error})") from None
    if not isinstance(config, dict):
        raise RmevalError(f"{given}: {path} is not a JSON object")
    return config


def _found(config: Mapping[str, Any]) -> str:
    architectures = "/".join(config.get("architectures") or []) or "no architectures"
    return f"config.json: {architectures}, {labels_of(config)} label{'s' if labels_of(config) != 1 else ''}"


def resolve_model(arg: ModelArg, registry: Registry, machine: Machine, hub: HubAccess) -> Resolved:
    """One `--model` as a config entry, or an RmevalError naming the problem in one line."""
    source = arg.source
    if source in registry.specs:
        return _from_registry(arg, source, registry, hub)
    folder = Path(source).expanduser()
    if folder.exists():
        return _from_folder(arg, folder, registry, machine)
    if _looks_like_path(source):
        hint = _closest(source, list(registry.specs)) if "/" not in source else ""
        raise RmevalError(f"--model {source}: no such folder, and no registry name{hint}")
    named = registry.named_by_path(source)
    if len(named) > 1:
        raise RmevalError(f"--model {source}: the registry has {len(named)} entries for this id ({', '.join(named)}); "
                          "pass one of their names")
    if named:
        return _from_registry(arg, named[0], registry, hub)
    return _from_hub(arg, registry, machine, hub)


def resolve_baseline(kind: str, registry: Registry) -> Resolved:
    name = f"{kind}{BASELINE_SUFFIX}"
    if name not in registry.specs:
        known = registry.baselines()
        listed = (f"; its baselines: {', '.join(known)}" if known
                  else f"; it has no `*{BASELINE_SUFFIX}` entry (an `adapter: baseline` model)")
        raise RmevalError(f"--baseline {kind}: the registry ({registry.path}) has no entry `{name}`{listed}")
    spec = registry.specs[name]
    return Resolved(name, name, f"--baseline {kind}", f"the registry's {name} ({spec.adapter}, {spec.path})")


def resolve_all(models: list[ModelArg], baselines: list[str], registry: Registry, machine: Machine,
                hub: HubAccess | None = None) -> tuple[list[Resolved], list[str]]:
    """Every model of the run, and one line per problem (every model is looked at, so all are named at once)."""
    hub = hub or HubAccess()
    resolved: list[Resolved] = []
    problems: list[str] = []
    for arg in models:
        try:
            resolved.append(resolve_model(arg, registry, machine, hub))
        except RmevalError as error:
            problems.append(str(error))
    for kind in dict.fromkeys(baselines):
        try:
            resolved.append(resolve_baseline(kind, registry))
        except RmevalError as error:
            problems.append(str(error))
    problems += same_names(resolved)
    return resolved, problems


def same_names(resolved: list[Resolved]) -> list[str]:
    """Two models with one name: scores live under results/scores/<benchmark>/<name>/, so one would overwrite the
    other."""
    by_name: dict[str, list[Resolved]] = {}
    for model in resolved:
        by_name.setdefault(model.name, []).append(model)
    return [f"{' and '.join(model.given for model in models)} are both named {name!r}; give "
            f"{'one' if len(models) == 2 else 'each'} its own --name after it"
            for name, models in by_name.items() if len(models) > 1]


def with_engine(resolved: list[Resolved], engine: str | None, registry: Registry) -> tuple[list[Resolved], list[str]]:
    """`--engine`: every model that runs forward passes here gets `engine: <engine>` (a registry name becomes an
    inline copy of its entry); endpoints and baselines have none. One problem per model whose adapter cannot."""
    if engine is None:
        return resolved, []
    from dataclasses import replace

    from rmeval.models.catalogue import ADAPTERS
    from rmeval.registry import adapter_problems

    out: list[Resolved] = []
    problems: list[str] = []
    for model in resolved:
        entry = {**registry.written[model.entry], "name": model.name} if isinstance(model.entry, str) else model.entry
        adapter = ADAPTERS.get(entry.get("adapter", DEFAULT_ADAPTER))
        if adapter is None or not adapter.loads_model:
            out.append(model)
            continue
        entry = {**entry, "engine": engine}
        problems += [f"--engine {engine}: {model.given}: {line}" for line in adapter_problems(entry)
                     if line.startswith("engine:")]
        out.append(replace(model, entry=entry, how=f"{model.how}, engine {engine}"))
    return out, problems


# ----------------------------------------------------------------------------- the same weights twice
FINGERPRINT_CHUNK = 1 << 20  # bytes read at each end of a weight file


def weights_fingerprint(folder: Path) -> str:
    """The folder's weights, told apart without reading them whole: every file's name and size, the JSON files'
    bytes and each weight file's first and last MiB (two checkpoints of one architecture share sizes and config,
    never their last tensors' bytes)."""
    import hashlib

    digest = hashlib.sha256()
    for item in sorted(folder.iterdir()):
        if not item.is_file():
            continue
        size = item.stat().st_size
        digest.update(f"{item.name}:{size}\n".encode())
        if item.suffix == ".json" and item.name != TINY_CARD:
            digest.update(item.read_bytes())
        elif item.suffix in WEIGHT_SUFFIXES:
            with item.open("rb") as handle:
                digest.update(handle.read(FINGERPRINT_CHUNK))
                handle.seek(max(0, size - FINGERPRINT_CHUNK))
                digest.update(handle.read(FINGERPRINT_CHUNK))
    return digest.hexdigest()


def _weights_key(model: Resolved, registry: Registry) -> tuple[str, ...] | None:
    """What identifies a model's weights: a local folder's fingerprint, or a hub id at its revision; None for a
    baseline or an endpoint (no weights of its own)."""
    from rmeval.hub import looks_local
    from rmeval.registry import resolve_models

    try:
        spec = resolve_models([model.entry], dict(registry.specs))[0]
    except RmevalError:  # an entry the checks name anyway (a kept one that no longer resolves)
        return None
    if not spec.adapter_entry.loads_model or spec.adapter_entry.remote:
        return None
    folder = Path(spec.path).expanduser()
    if looks_local(spec.path) or folder.is_dir():
        return ("folder", weights_fingerprint(folder)) if folder.is_dir() else None
    return ("hub", spec.path, spec.revision or "main")


def same_weights(resolved: Sequence[Resolved], registry: Registry) -> list[str]:
    """One warning line per set of models that load the same weights (the user may mean it: a renamed copy)."""
    by_key: dict[tuple[str, ...], list[Resolved]] = {}
    for model in resolved:
        key = _weights_key(model, registry)
        if key is not None:
            by_key.setdefault(key, []).append(model)
    lines = []
    for key, models in by_key.items():
        if len(models) > 1:
            what = "the same folder contents" if key[0] == "folder" else f"the hub's {key[1]} at {key[2]}"
            lines.append(f"{', '.join(f'{m.name} ({m.given})' for m in models)} load {what}: the same weights are "
                         "scored twice (meant? then nothing is wrong)")
    return lines
