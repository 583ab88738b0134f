"""Model registry: `config/models.yaml` entries and inline config models as `ModelSpec`s.

A registry entry names its loader (`adapter`) and everything the scoring engine needs;
a user adds a model by writing one entry, either in the registry or inline in their
own config under `models:` (a mapping with the same fields plus `name`).

Every field's default is written once, in workflow/schemas/models.schema.yaml: the dataclasses below take theirs
from it when this module is imported, so `ModelSpec(name=..., path=...)` in Python and an entry read from YAML get
the same values. (Filling the defaults into the entry when it is read instead would leave Python-built specs
without them, and would change the config that the lock hashes.)
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rmeval.config_check import SCHEMA_DIR, ConfigError, config_problems, key_path, load_schema
from rmeval.errors import RmevalError
from rmeval.models.catalogue import ADAPTERS, Adapter, unknown_adapter

MODELS_SCHEMA = SCHEMA_DIR / "models.schema.yaml"


@functools.lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return load_schema(MODELS_SCHEMA)


def entry_defaults(properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """Field -> default of a model entry (`$defs/entry`), or of `properties` (its `resources`)."""
    if properties is None:
        properties = _schema()["$defs"]["entry"]["properties"]
    return {name: node["default"] for name, node in properties.items() if "default" in node}


_ENTRY_DEFAULTS = entry_defaults()
_RESOURCE_DEFAULTS = entry_defaults(_schema()["$defs"]["entry"]["properties"]["resources"]["properties"])
DEFAULT_ADAPTER: str = _ENTRY_DEFAULTS["adapter"]
# Fields added after results existed: `to_json` omits them while they hold their default (see there).
LATER_FIELDS = ("attn_implementation", "parameters", "engine")
LOCAL_ONLY = ("attn_implementation",)  # fields whose schema default applies to locally loaded models only


def valid_model_name(text: str) -> str:
    """A model name the schema accepts (`$defs/entry` `name`: letters, digits, `.`, `_`, `-`), made from `text` (a
    folder's or a hub id's last part): every run of other characters becomes one `-`."""
    allowed = re.fullmatch(r"\^(\[.+\])\+\$", _schema()["$defs"]["entry"]["properties"]["name"]["pattern"])
    if allowed is None:
        raise ValueError(f"{MODELS_SCHEMA.name}: the name pattern is no longer one character class")
    other = "[^" + allowed.group(1)[1:]
    return re.sub(f"{other}+", "-", text).strip("-") or "model"


def _default(defaults: dict[str, Any], name: str) -> Any:
    """The schema's default as a dataclass field (a fresh copy per instance for a mapping or a list)."""
    value = defaults[name]
    if isinstance(value, (dict, list)):
        return field(default_factory=lambda: copy.deepcopy(value))
    return field(default=value)


@dataclass(frozen=True)
class ModelResources:
    gpu: int = _default(_RESOURCE_DEFAULTS, "gpu")
    mem_mb: int = _default(_RESOURCE_DEFAULTS, "mem_mb")
    runtime: int = _default(_RESOURCE_DEFAULTS, "runtime")  # minutes
    gpu_model: str | None = _default(_RESOURCE_DEFAULTS, "gpu_model")
    slurm_partition: str | None = _default(_RESOURCE_DEFAULTS, "slurm_partition")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    path: str
    adapter: str = _default(_ENTRY_DEFAULTS, "adapter")
    revision: str | None = _default(_ENTRY_DEFAULTS, "revision")
    dtype: str = _default(_ENTRY_DEFAULTS, "dtype")  # auto: bf16 on GPU, fp32 on CPU
    max_length: int = _default(_ENTRY_DEFAULTS, "max_length")
    trust_remote_code: bool = _default(_ENTRY_DEFAULTS, "trust_remote_code")
    # None for an HTTP adapter or a baseline (it loads no model here): a default applies only where it applies
    # (`_applicable`).
    attn_implementation: str | None = _default(_ENTRY_DEFAULTS, "attn_implementation")
    # The schema's `resources: {}` with its fields' defaults.
    resources: ModelResources = field(default_factory=ModelResources)
    parameters: float | None = _default(_ENTRY_DEFAULTS, "parameters")  # billions; `rmeval models` lists it
    rewardbench_rank: int | None = _default(_ENTRY_DEFAULTS, "rewardbench_rank")
    # Chat-template hygiene: override the template, and say whether the model was trained with BOS.
    chat_template: str | None = _default(_ENTRY_DEFAULTS, "chat_template")
    add_bos: bool | None = _default(_ENTRY_DEFAULTS, "add_bos")  # None: follow the tokenizer / template
    truncation: str = _default(_ENTRY_DEFAULTS, "truncation")
    # Adapter-specific settings (API endpoint, PRM step tag and tokens, ...).
    options: dict[str, Any] = _default(_ENTRY_DEFAULTS, "options")
    description: str = _default(_ENTRY_DEFAULTS, "description")
    # transformers | vllm | {"vllm": {"url": ...}}: what runs the forward passes (rmeval.vllm for the second).
    engine: str | dict[str, Any] = _default(_ENTRY_DEFAULTS, "engine")

    def __post_init__(self) -> None:
        # The schema's defaults of locally loaded models do not apply to an HTTP adapter or a baseline (`_applicable`).
        applicable = _applicable(self.adapter)
        for name in LOCAL_ONLY:
            if applicable[name] is None and getattr(self, name) == _ENTRY_DEFAULTS[name]:
                object.__setattr__(self, name, None)

    @property
    def adapter_entry(self) -> Adapter:
        """The adapter's catalogue entry (rmeval.models.catalogue): remote or local, its options."""
        if self.adapter not in ADAPTERS:
            raise RmevalError(f"model {self.name!r}: {unknown_adapter(self.adapter)}")
        return ADAPTERS[self.adapter]

    @property
    def engine_name(self) -> str:
        """`transformers` or `vllm` (a vLLM server rmeval starts, or the one at `vllm_url`)."""
        return self.engine if isinstance(self.engine, str) else next(iter(self.engine))

    @property
    def vllm_url(self) -> str | None:
        """The base URL of an already running vLLM server (`engine: {vllm: {url: ...}}`), else None."""
        return None if isinstance(self.engine, str) else str(self.engine["vllm"]["url"]).rstrip("/")

    @property
    def judge_mode(self) -> str | None:
        """direct / pairwise for an LLM judge, else None."""
        return str(self.options.get("mode")) if self.adapter_entry.judge else None

    def to_json(self) -> str:
        # A field added after results exist is left out while it holds its default, so the spec JSON (and with it
        # every scoring job's inputs) of an entry that does not set it stays what it was.
        fields = asdict(self)
        defaults = _applicable(self.adapter)
        for name in LATER_FIELDS:
            if fields[name] == defaults[name]:
                del fields[name]
        return json.dumps(fields, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ModelSpec:
        return spec_from_mapping(json.loads(text), where="--spec: model")


def entry_problems(entry: dict[str, Any]) -> list[str]:
    """One line per problem of one model entry, each starting with its key path inside the entry: the
    schema's fields (workflow/schemas/models.schema.yaml), then what the adapter's catalogue entry says."""
    return config_problems(entry, _schema()["$defs"]["inline_entry"]) + adapter_problems(entry)


def adapter_problems(entry: dict[str, Any]) -> list[str]:
    """What the adapter catalogue says of an entry: a known adapter, the options it reads."""
    adapter = entry.get("adapter", DEFAULT_ADAPTER)
    if not isinstance(adapter, str):
        return []  # the schema says so
    if adapter not in ADAPTERS:
        return [f"adapter: {unknown_adapter(adapter)}"]
    kind = ADAPTERS[adapter]
    problems: list[str] = []
    if kind.native_head and entry.get("trust_remote_code"):
        problems.append(
            f"trust_remote_code: adapter {adapter!r} loads the checkpoint into rmeval's own head "
            f"(rmeval.models.heads) and never runs the model repository's code; set trust_remote_code: false"
        )
    if not kind.loads_model and entry.get("attn_implementation") is not None:
        how = "scores over HTTP" if kind.remote else "is a rule on the text"
        problems.append(f"attn_implementation: adapter {adapter!r} {how} and loads no model here; remove the key")
    engine = entry.get("engine")
    if (engine == "vllm" or isinstance(engine, dict)) and not kind.vllm_pooling:
        able = ", ".join(name for name, adapter in ADAPTERS.items() if adapter.vllm_pooling)
        problems.append(f"engine: vLLM's pooling runner cannot give adapter {adapter!r}'s reward exactly; engine vllm "
                        f"takes {able} only: set engine: transformers")
    options = entry.get("options") or {}
    if isinstance(options, dict):  # else the schema said so
        problems += kind.option_problems(options)
    return problems


def _applicable(adapter: str) -> dict[str, Any]:
    """The schema's entry defaults that apply to an adapter: an HTTP adapter or a baseline loads no model, so no
    attention kernel (None) rather than the schema's `sdpa`."""
    kind = ADAPTERS.get(adapter)
    return {**_ENTRY_DEFAULTS, **({"attn_implementation": None} if kind is not None and not kind.loads_model else {})}


def _spec(entry: dict[str, Any]) -> ModelSpec:
    values = dict(entry)
    if "path" not in values:  # the schema lets only a weightless adapter (a baseline) leave it out
        values["path"] = ADAPTERS[values.get("adapter", DEFAULT_ADAPTER)].default_path(dict(entry.get("options") or {}))
    values["resources"] = ModelResources(**(entry.get("resources") or {}))
    values["options"] = dict(entry.get("options") or {})
    if isinstance(values.get("engine"), dict):
        values["engine"] = copy.deepcopy(values["engine"])
    return ModelSpec(**values)


def spec_from_mapping(entry: dict[str, Any], where: str) -> ModelSpec:
    """Build a ModelSpec from a mapping; `where` names the file/key for error messages."""
    if not isinstance(entry, dict):
        raise RmevalError(f"{where}: a model entry must be a mapping, got {type(entry).__name__}")
    problems = entry_problems(entry)
    if problems:
        raise RmevalError("\n".join(f"{where}.{line}" for line in problems))
    return _spec(entry)


def load_registry(path: str | Path) -> dict[str, ModelSpec]:
    """Read `config/models.yaml` (a mapping `models: {name: entry}`), checked against
    workflow/schemas/models.schema.yaml and the adapter catalogue; every problem is one line."""
    from rmeval.io.yaml_io import load_yaml

    path = Path(path)
    if not path.exists():
        raise RmevalError(f"model registry not found: {path}")
    document = load_yaml(path.read_text(encoding="utf-8")) or {}
    problems = config_problems(document, _schema())
    if problems:  # the document's shape and the entries' fields first: the catalogue reads both
        raise ConfigError(problems, source=str(path))
    named = {name: {**entry, "name": name} for name, entry in document["models"].items()}
    for name, entry in named.items():
        problems += [f"{key_path(['models', name])}.{line}" for line in adapter_problems(entry)]
    if problems:
        raise ConfigError(problems, source=str(path))
    return {name: _spec(entry) for name, entry in named.items()}


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
