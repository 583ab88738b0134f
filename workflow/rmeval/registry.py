"""Model registry: `config/models.yaml` entries and inline config models as `ModelSpec`s.

A registry entry names its loader (`adapter`) and everything the scoring engine needs;
a user adds a model by writing one entry, either in the registry or inline in their
own config under `models:` (a mapping with the same fields plus `name`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

ADAPTERS = ("sequence-classification", "armorm", "grm", "eurus", "nemotron-api", "prm", "judge")
# Adapters that score through an HTTP endpoint: no download, no GPU, no torch in the job.
API_ADAPTERS = ("nemotron-api", "judge")
JUDGE_MODES = ("direct", "pairwise")
# Adapters whose heads rmeval implements itself (rmeval.models.heads): they never run hub code.
NATIVE_HEAD_ADAPTERS = ("armorm", "grm", "eurus")
DTYPES = ("auto", "float32", "bfloat16", "float16")
TRUNCATION_SIDES = ("prompt-left", "response-right")


@dataclass(frozen=True)
class ModelResources:
    gpu: int = 1
    mem_mb: int = 32000
    runtime: int = 240  # minutes
    gpu_model: str | None = None
    slurm_partition: str | None = None


@dataclass(frozen=True)
class ModelSpec:
    name: str
    path: str
    adapter: str = "sequence-classification"
    revision: str | None = None
    dtype: str = "auto"  # bf16 on GPU, fp32 on CPU
    max_length: int = 4096
    trust_remote_code: bool = False
    resources: ModelResources = field(default_factory=ModelResources)
    rewardbench_rank: int | None = None
    # Chat-template hygiene: override the template, and say whether the model was trained with BOS.
    chat_template: str | None = None
    add_bos: bool | None = None  # None: follow the tokenizer / template
    truncation: str = "prompt-left"
    # Adapter-specific settings (API endpoint, PRM step tag and tokens, ...).
    options: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    @property
    def judge_mode(self) -> str | None:
        """direct / pairwise for an LLM judge, else None."""
        return str(self.options.get("mode")) if self.adapter == "judge" else None

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ModelSpec:
        return spec_from_mapping(json.loads(text), where="--spec")


_SPEC_KEYS = {f.name for f in fields(ModelSpec)}
_RESOURCE_KEYS = {f.name for f in fields(ModelResources)}


def spec_from_mapping(entry: dict[str, Any], where: str) -> ModelSpec:
    """Build a ModelSpec from a mapping; `where` names the file/key for error messages."""
    if not isinstance(entry, dict):
        raise RmevalError(f"{where}: a model entry must be a mapping, got {type(entry).__name__}")
    unknown = sorted(set(entry) - _SPEC_KEYS)
    if unknown:
        raise RmevalError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(_SPEC_KEYS)}")
    for required in ("name", "path"):
        if not entry.get(required):
            raise RmevalError(f"{where}: missing required key {required!r}")
    adapter = entry.get("adapter", "sequence-classification")
    if adapter not in ADAPTERS:
        raise RmevalError(f"{where}.adapter: unknown adapter {adapter!r}; known adapters: {list(ADAPTERS)}")
    if adapter in NATIVE_HEAD_ADAPTERS and entry.get("trust_remote_code"):
        raise RmevalError(
            f"{where}.trust_remote_code: adapter {adapter!r} loads the checkpoint into rmeval's own head "
            f"(rmeval.models.heads) and never runs the model repository's code; set trust_remote_code: false"
        )
    dtype = entry.get("dtype", "auto")
    if dtype not in DTYPES:
        raise RmevalError(f"{where}.dtype: {dtype!r} is not one of {list(DTYPES)}")
    truncation = entry.get("truncation", "prompt-left")
    if truncation not in TRUNCATION_SIDES:
        raise RmevalError(f"{where}.truncation: {truncation!r} is not one of {list(TRUNCATION_SIDES)}")
    resources = entry.get("resources") or {}
    bad_resources = sorted(set(resources) - _RESOURCE_KEYS)
    if bad_resources:
        raise RmevalError(f"{where}.resources: unknown key(s) {bad_resources}; allowed: {sorted(_RESOURCE_KEYS)}")
    if adapter == "judge" and (entry.get("options") or {}).get("mode") not in JUDGE_MODES:
        raise RmevalError(f"{where}.options.mode: a judge needs mode {' or '.join(JUDGE_MODES)}")
    values = dict(entry)
    values["resources"] = ModelResources(**resources)
    values["options"] = dict(entry.get("options") or {})
    return ModelSpec(**values)


def load_registry(path: str | Path) -> dict[str, ModelSpec]:
    """Read `config/models.yaml`: a mapping `models: {name: entry}`."""
    import yaml

    path = Path(path)
    if not path.exists():
        raise RmevalError(f"model registry not found: {path}")
    with path.open() as handle:
        document = yaml.safe_load(handle) or {}
    entries = document.get("models")
    if not isinstance(entries, dict):
        raise RmevalError(f"{path}: expected a top-level 'models:' mapping of name -> entry")
    registry: dict[str, ModelSpec] = {}
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            raise RmevalError(f"{path}: models.{name} must be a mapping")
        registry[name] = spec_from_mapping({**entry, "name": name}, where=f"{path}: models.{name}")
    return registry


def resolve_models(requested: list[Any], registry: dict[str, ModelSpec], where: str = "config") -> list[ModelSpec]:
    """Turn the config's `models:` list (registry names or inline mappings) into specs."""
    specs: list[ModelSpec] = []
    seen: set[str] = set()
    for index, item in enumerate(requested):
        key = f"{where}: models[{index}]"
        if isinstance(item, str):
            if item not in registry:
                import difflib

                close = difflib.get_close_matches(item, list(registry), n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise RmevalError(f"{key}: unknown model {item!r}; {hint}known models: {sorted(registry)}")
            spec = registry[item]
        else:
            spec = spec_from_mapping(item, where=key)
        if spec.name in seen:
            raise RmevalError(f"{key}: duplicate model name {spec.name!r}")
        seen.add(spec.name)
        specs.append(spec)
    return specs
