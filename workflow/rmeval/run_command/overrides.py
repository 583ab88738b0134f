"""`--set KEY=VALUE`: any config key by its dotted path (`rewardbench.source=local`), the value read as YAML
(`0.01`, `true`, `null`, `[a, b]`, text). A key or value the schema refuses is named with the schema's own message
(rmeval.config_check), prefixed by the `--set` that brought it."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rmeval.errors import RmevalError


@dataclass(frozen=True)
class Setting:
    text: str  # as given
    path: tuple[str, ...]
    value: Any

    @property
    def key(self) -> str:
        return ".".join(self.path)


def parse_setting(text: str) -> Setting:
    """`KEY=VALUE` -> Setting; one line naming what is wrong otherwise."""
    from rmeval.io.yaml_io import load_yaml

    key, equals, raw = text.partition("=")
    path = tuple(key.strip().split("."))
    if not equals or not all(path):
        raise RmevalError(f"--set {text}: expected KEY=VALUE with a dotted config key, e.g. --set stats.alpha=0.01")
    try:
        value = load_yaml(raw)
    except Exception as error:  # yaml.YAMLError: the value as YAML
        reason = str(error).splitlines()[0]
        raise RmevalError(f"--set {text}: the value is not valid YAML ({reason})") from None
    return Setting(text, path, value)


def apply(config: dict[str, Any], setting: Setting) -> None:
    """Set the key in `config`, making the sections on the way."""
    node = config
    for depth, part in enumerate(setting.path[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            where = ".".join(setting.path[: depth + 1])
            raise RmevalError(f"--set {setting.text}: `{where}` is {type(child).__name__} here, not a section")
        node = child
    node[setting.path[-1]] = copy.deepcopy(setting.value)


def problems(config: dict[str, Any]) -> list[str]:
    """What the schema says of `config` (checked on a copy: defaults are not filled into it)."""
    from rmeval.config_check import config_problems

    return config_problems(copy.deepcopy(config), _schema())


@functools.cache
def _schema() -> dict[str, Any]:
    """The config schema with every benchmark's sections, read once per process."""
    from rmeval.config_check import config_schema

    return config_schema()


def apply_all(config: dict[str, Any], settings: Sequence[Setting]) -> list[str]:
    """Apply each setting in turn; every problem the schema finds is named with the `--set` that brought it (a
    problem of the config before any `--set` is named alone)."""
    found = problems(config)
    lines = list(found)
    for setting in settings:
        try:
            apply(config, setting)
        except RmevalError as error:
            lines.append(str(error))
            continue
        now = problems(config)
        lines += [f"--set {setting.text}: {line}" for line in now if line not in found]
        found = now
    return lines
