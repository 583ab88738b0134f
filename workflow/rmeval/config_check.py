"""Validate the workflow config against workflow/schemas/config.schema.yaml, one plain line per problem.

The JSON schema stays the single source of truth and holds every default: validation fills them into the config,
as `snakemake.utils.validate(config, schema, set_default=True)` does, so rules read `config[...]` with no fallback.
Instead of jsonschema's message and schema dump every problem becomes one line naming the key path, the bad value
and what is allowed:

    arxiv.papers_per_grup: unknown key; did you mean `papers_per_group`?
    groups: group name 'computer science' has a space; use `_`: `computer_science`
    arxiv.papers_per_group: got 'many' (a string); expected an integer >= 1
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

# Readable names for the schema's patterns (the pattern itself stays in the schema).
_PATTERN_HINTS = {
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}$": 'a quoted date "YYYY-MM-DD"',
    "^[a-z0-9_]+$": "lower-case letters, digits and `_`",
    "^[A-Za-z0-9._-]+$": "letters, digits, `.`, `_` and `-`",
}
# A schema node may name its pattern in words itself (a benchmark's own patterns: its schema, not this module).
PATTERN_HINT_MARK = "x-pattern-hint"
_TYPE_NAMES = {
    "integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
    "array": "a list", "object": "a mapping", "null": "null",
}
_MAX_VALUE_CHARS = 60


class ConfigError(RmevalError):
    """The config breaks the schema; `problems` holds one line per problem."""

    def __init__(self, problems: Sequence[str], source: str = "config") -> None:
        self.problems = list(problems)
        count = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        lines = "\n".join(f"  {line}" for line in self.problems)
        super().__init__(f"{source}: {count} (see config/README.md for every key):\n{lines}")


SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
# A `$ref` into the shared schemas from anywhere (a benchmark's own schema, in the repository or out of it):
# `$ref: "rmeval:config.schema.yaml#/$defs/model"` (a section's model list).
SHARED_REF = "rmeval:"


def load_schema(path: str | Path) -> dict[str, Any]:
    """The schema at `path` with every `$ref` (`#/$defs/x`, `other.schema.yaml#/$defs/x`, `rmeval:file#/...`: the
    shared schemas, SHARED_REF) replaced by what it
    points to, so that the messages below can read any node of it (snakemake.utils.validate resolves the same
    references itself)."""
    from rmeval.io.yaml_io import load_yaml

    path = Path(path).resolve()
    documents: dict[Path, Any] = {}

    def document(file: Path) -> Any:
        if file not in documents:
            documents[file] = load_yaml(file.read_text(encoding="utf-8"))
        return documents[file]

    def inline(node: Any, file: Path) -> Any:
        if isinstance(node, list):
            return [inline(item, file) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: inline(value, file) for key, value in node.items()}
        if "$ref" not in node:
            return node
        target_name, _, pointer = str(node.pop("$ref")).partition("#")
        if target_name.startswith(SHARED_REF):  # "rmeval:config.schema.yaml": the shared schema folder
            target_file = (SCHEMA_DIR / target_name.removeprefix(SHARED_REF)).resolve()
        else:
            target_file = (file.parent / target_name).resolve() if target_name else file
        target = document(target_file)
        for part in filter(None, pointer.split("/")):
            target = target[part]
        return {**inline(target, target_file), **node}

    return inline(document(path), path)


# A schema node marked `x-fill-defaults: false` keeps the defaults below it as annotations: validation does not fill
# them into the instance (a model entry: it stays as written, as the config's hash in the lock saw it; its defaults
# are applied by rmeval.registry.ModelSpec, which reads them from the same schema).
NO_FILL_MARK = "x-fill-defaults"


def _without_unfilled_defaults(node: Any, inside: bool = False) -> Any:
    """A copy of `node` without the `default`s of the subtrees marked NO_FILL_MARK: false."""
    if isinstance(node, list):
        return [_without_unfilled_defaults(item, inside) for item in node]
    if not isinstance(node, dict):
        return node
    inside = inside or node.get(NO_FILL_MARK) is False
    copied: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):  # its keys are property names, not keywords
            copied[key] = {name: _without_unfilled_defaults(sub, inside) for name, sub in value.items()}
        elif not (inside and key == "default"):
            copied[key] = _without_unfilled_defaults(value, inside)
    return copied


def _default_filling_validator(schema: dict[str, Any]) -> Any:
    """Draft 2020-12 validator that fills `default`s while it validates (the jsonschema FAQ recipe,
    which snakemake.utils.validate uses too), except below a node marked `x-fill-defaults: false`."""
    from jsonschema import Draft202012Validator, validators

    validate_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: dict, instance: Any, node: dict) -> Iterable[Any]:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    # A copy: the schema's `default: {}` must not collect this config's nested defaults.
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from validate_properties(validator, properties, instance, node)

    return validators.extend(Draft202012Validator, {"properties": set_defaults})(_without_unfilled_defaults(schema))


def check_config(config: dict[str, Any], schema: dict[str, Any], source: str = "config") -> None:
    """Fill defaults into `config` in place; raise ConfigError listing every problem."""
    problems = config_problems(config, schema)
    if problems:
        raise ConfigError(problems, source)


def fill_defaults(config: dict[str, Any], schema: dict[str, Any]) -> None:
    """Fill the schema's defaults into `config` in place without judging it (a module's `skip_validation`): the rules
    read `config[...]` with no fallback of their own, so the defaults must be there either way."""
    for _ in _default_filling_validator(schema).iter_errors(config):
        pass


def config_problems(config: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    validator = _default_filling_validator(schema)
    lines: list[str] = []
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        for line in _describe(error, schema):
            if line not in lines:
                lines.append(line)
    return lines


# ----------------------------------------------------------------------------- formatting
def key_path(parts: Iterable[Any]) -> str:
    """('arxiv', 'api', 'page_size') -> arxiv.api.page_size; ('models', 1) -> models[1]."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."


# What a YAML value is, in the words of an error message (bool before int: True is an int to Python).
_KIND_WORDS: tuple[tuple[type, str], ...] = ((type(None), "null"), (bool, "true/false"), (int, "an integer"),
                                             (float, "a number"), (str, "a string"), (list, "a list"),
                                             (dict, "a mapping"))


def _kind(value: Any) -> str:
    return next((words for kind, words in _KIND_WORDS if isinstance(value, kind)), type(value).__name__)


def allowed(node: dict[str, Any]) -> str:
    """What a schema node accepts, in words: 'an integer >= 1', 'one of snapshot, api', ..."""
    if "const" in node:
        return f"exactly {node['const']!r}"
    if "enum" in node:
        return "one of " + ", ".join(str(v) for v in node["enum"])
    for combinator in ("oneOf", "anyOf"):
        if combinator in node:
            return ", or ".join(allowed(branch) for branch in node[combinator])
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or [])
    words = [_TYPE_NAMES.get(t, t) for t in types if t != "null"]
    text = " or ".join(words) or "a value"
    bounds = []
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in node:
            bounds.append(f"{sign} {node[key]}")
    if bounds:
        text += " " + " and ".join(bounds)
    if "pattern" in node:
        hint = node.get(PATTERN_HINT_MARK) or _PATTERN_HINTS.get(node["pattern"], "matching " + node["pattern"])
        text += f" ({hint})"
    if "required" in node and "object" in types:
        text += " with " + " and ".join(f"`{key}`" for key in node["required"])
    if "minItems" in node:
        text += f" of at least {node['minItems']} item{'s' if node['minItems'] != 1 else ''}"
    if "null" in types:
        text += ", or null"
    return text


def _node_at(schema: dict[str, Any], schema_path: Sequence[Any]) -> dict[str, Any]:
    node: Any = schema
    try:
        for part in schema_path:
            node = node[part]
    except (KeyError, IndexError, TypeError):
        return {}
    return node if isinstance(node, dict) else {}


def _all_key_paths(node: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, child in (node.get("properties") or {}).items():
        paths.append((*prefix, name))
        if isinstance(child, dict):
            paths.extend(_all_key_paths(child, (*prefix, name)))
    return paths


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return close[0] if close else None


def _unknown_keys(error: Any, schema: dict[str, Any]) -> list[str]:
    where = list(error.absolute_path)
    known = list(error.schema.get("properties") or {})
    extras = [key for key in error.instance if key not in known] if isinstance(error.instance, dict) else []
    lines = []
    for extra in extras:
        path = key_path([*where, extra])
        suggestion = did_you_mean(extra, known)
        if suggestion:
            lines.append(f"{path}: unknown key; did you mean `{suggestion}`?")
            continue
        # A key put in the wrong section: `papers_per_group` at the top level belongs under `arxiv`.
        elsewhere = [p for p in _all_key_paths(schema) if p[-1] == extra and list(p[:-1]) != where]
        if elsewhere:
            lines.append(f"{path}: unknown key here; did you mean `{key_path(elsewhere[0])}`?")
            continue
        lines.append(f"{path}: unknown key; allowed: {', '.join(known)}")
    return lines


def _group_name(error: Any) -> str:
    name = str(error.instance)
    fixed = "_".join(name.lower().replace("-", " ").split())
    if " " in name:
        return f"groups: group name {name!r} has a space; use `_`: `{fixed}`"
    return f"groups: group name {name!r} must be {_PATTERN_HINTS['^[a-z0-9_]+$']}, e.g. `{fixed}`"


def _describe(error: Any, schema: dict[str, Any]) -> list[str]:
    path = key_path(error.absolute_path)
    node = error.schema if isinstance(error.schema, dict) else {}
    kind = error.validator
    if kind == "additionalProperties":
        return _unknown_keys(error, schema)
    if kind == "pattern" and "propertyNames" in list(error.absolute_schema_path):
        return [_group_name(error)]
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        where = key_path([*error.absolute_path, missing])
        child = (node.get("properties") or {}).get(missing) or _parent_properties(error, schema).get(missing) or {}
        when = ""
        if "then" in list(error.absolute_schema_path):
            condition = _node_at(schema, list(error.absolute_schema_path)[:-2]).get("if", {})
            constants = _constants(condition, list(error.absolute_path))
            when = (" when " + ", ".join(f"{key_path(at)} is {value!r}" for at, value in constants)) if constants else ""
        what = f" ({child['description'].rstrip('.')})" if child.get("description") else ""
        return [f"{where}: missing; required{when}{what}"]
    if kind in ("oneOf", "anyOf"):
        return _alternatives(error, schema, path)
    if kind == "enum":
        suggestion = did_you_mean(error.instance, node.get("enum", [])) if isinstance(error.instance, str) else None
        hint = f"; did you mean `{suggestion}`?" if suggestion else ""
        return [f"{path}: got {show(error.instance)}; allowed: {', '.join(str(v) for v in node['enum'])}{hint}"]
    if kind == "type":
        return [f"{path}: got {show(error.instance)} ({_kind(error.instance)}); expected {allowed(node)}"]
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "const"):
        return [f"{path}: got {show(error.instance)}; expected {allowed(node)}"]
    if kind == "minLength":
        return [f"{path}: got {show(error.instance)}; expected a non-empty string"]
    if kind == "minItems":
        return [f"{path}: got {show(error.instance)}; needs at least {node['minItems']} item(s)"]
    if kind == "minProperties":
        count = len(error.instance) if isinstance(error.instance, dict) else 0
        return [f"{path}: has {count} entr{'y' if count == 1 else 'ies'}; needs at least {node['minProperties']}"]
    if kind == "uniqueItems":
        seen: list[Any] = []
        repeated = [v for v in error.instance if v in seen or seen.append(v)]  # type: ignore[func-returns-value]
        return [f"{path}: {show(repeated[0]) if repeated else 'an item'} is listed twice; list each once"]
    message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
    return [f"{path}: {message}"]


def _constants(condition: dict[str, Any], at: list[Any]) -> list[tuple[list[Any], Any]]:
    """The (key path, value) pairs an `if` fixes with `const`, nested sections included (fairness.enabled)."""
    found: list[tuple[list[Any], Any]] = []
    for key, node in (condition.get("properties") or {}).items():
        if isinstance(node, dict) and "const" in node:
            found.append(([*at, key], node["const"]))
        elif isinstance(node, dict):
            found += _constants(node, [*at, key])
    return found


def _parent_properties(error: Any, schema: dict[str, Any]) -> dict[str, Any]:
    parts = list(error.absolute_schema_path)
    for cut in range(len(parts), -1, -1):
        node = _node_at(schema, parts[:cut])
        if "properties" in node:
            return node["properties"]
    return {}


def _alternatives(error: Any, schema: dict[str, Any], path: str) -> list[str]:
    """oneOf/anyOf: report the branch whose type fits the value, else list what every branch accepts."""
    branches = error.schema.get(error.validator, [])
    by_branch: dict[int, list[Any]] = {}
    for sub in error.context or []:
        by_branch.setdefault(int(list(sub.relative_schema_path)[0]), []).append(sub)
    for _, sub_errors in sorted(by_branch.items()):
        if not any(sub.validator == "type" and not list(sub.absolute_path)[len(error.absolute_path):]
                   for sub in sub_errors):
            if all(sub.validator in ("enum", "const") and len(sub.absolute_path) == len(error.absolute_path)
                   for sub in sub_errors):
                break  # the value has a fitting type but is no listed choice: name every branch's choices
            lines: list[str] = []
            for sub in sub_errors:
                lines.extend(_describe(sub, schema))
            if lines:
                return lines
    accepted = ", or ".join(allowed(branch) for branch in branches)
    choices = [str(v).lower() if isinstance(v, bool) else str(v) for b in branches for v in b.get("enum", [])]
    suggestion = did_you_mean(error.instance, choices) if isinstance(error.instance, str) else None
    hint = f"; did you mean `{suggestion}`?" if suggestion else ""
    return [f"{path}: got {show(error.instance)} ({_kind(error.instance)}); expected {accepted}{hint}"]


# ----------------------------------------------------------------------------- defaults for standalone commands
CONFIG_SCHEMA = SCHEMA_DIR / "config.schema.yaml"
MODELS_SCHEMA = SCHEMA_DIR / "models.schema.yaml"


def benchmark_schema_path(target: str) -> Path:
    """A benchmark's `config_schema` ("package:file.yaml"): the file beside that package's modules."""
    import importlib

    package, _, filename = target.partition(":")
    return Path(importlib.import_module(package).__file__).parent / filename  # type: ignore[arg-type]


def config_schema(path: Path = CONFIG_SCHEMA) -> dict[str, Any]:
    """The config schema: the shared file's sections and each benchmark's own (its catalogue's `config_schema`),
    so that adding a benchmark adds its config section without an edit here or in the shared file."""
    from rmeval.benchmarks import all_benchmarks

    schema = load_schema(path)
    for bench in all_benchmarks():
        if not bench.config_schema:
            continue
        fragment_path = benchmark_schema_path(bench.config_schema)
        fragment = load_schema(fragment_path)
        for key, node in fragment.get("properties", {}).items():
            if key in schema["properties"]:
                raise ValueError(f"{fragment_path}: config section {key!r} is already defined by {path.name}")
            schema["properties"][key] = node
        # Its own keys of a run-level section (fairness's `stats.permutations`), beside the run's.
        for section, keys in fragment.get("extends", {}).items():
            owned = schema["properties"].get(section, {}).get("properties")
            if owned is None:
                raise ValueError(f"{fragment_path}: extends {section!r}, which {path.name} does not define")
            for key, node in keys.items():
                if key in owned:
                    raise ValueError(f"{fragment_path}: {section}.{key} is already defined")
                owned[key] = node
        # Its conditions on the whole config (fairness: `groups` required while it is on).
        schema.setdefault("allOf", []).extend(fragment.get("allOf", []))
    return schema


def _cached_schema(path: Path, _cache: dict[Path, dict[str, Any]] = {}) -> dict[str, Any]:  # noqa: B006
    if path not in _cache:
        _cache[path] = config_schema(path) if path == CONFIG_SCHEMA else load_schema(path)
    return _cache[path]


def schema_node(dotted_key: str, schema_path: Path = CONFIG_SCHEMA) -> dict[str, Any]:
    """The schema node of a config key ("scoring.token_budget")."""
    node: Any = _cached_schema(schema_path)
    for part in dotted_key.split("."):
        properties = node.get("properties") if isinstance(node, dict) else None
        if not properties or part not in properties:
            raise KeyError(f"{schema_path.name}: no key {dotted_key!r}")
        node = properties[part]
    return copy.deepcopy(node)


def schema_default(dotted_key: str, schema_path: Path = CONFIG_SCHEMA) -> Any:
    """The schema's default of a config key ("stats.alpha", "scoring.threads"): the one place a default is written,
    read by `rmeval <command>` run by hand (its argparse defaults) so that it behaves like the workflow."""
    node = schema_node(dotted_key, schema_path)
    if "default" not in node:
        raise KeyError(f"{schema_path.name}: {dotted_key!r} has no default")
    if node["default"] is None and RUN_DEFAULT_MARK in node:  # a benchmark's override: by hand, the run's value
        return schema_default(node[RUN_DEFAULT_MARK], schema_path)
    return node["default"]


# A benchmark's own `bootstrap` / `seed` (default null) names the run-level key it falls back to
# (rmeval.run_plan.run_setting does so in the workflow; schema_default does so for a command run by hand).
RUN_DEFAULT_MARK = "x-run-default"
