"""One way for a rule to hand a command its settings: `--settings JSON`, a JSON object built at parse time by the
benchmark's plan (`settings_json`), whose keys are the command's own option names (argparse dests).

The object supplies the options' values; a flag given on the command line still wins, so a command run by hand
takes flags as before. An unknown key, or a value a flag would refuse, is an error naming the key, so a typo in a
plan cannot silently fall back to a default.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from rmeval.errors import RmevalError

SETTINGS_FLAG = "--settings"


def settings_json(settings: Mapping[str, Any]) -> str:
    """Canonical JSON of a command's settings (a rule param: the same settings give the same string, and a changed
    setting re-runs the job)."""
    return json.dumps(dict(settings), sort_keys=True, default=str, separators=(",", ":"))


def add_settings_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(SETTINGS_FLAG, default=None, metavar="JSON",
                        help="the command's options as one JSON object (what the workflow's rules pass); "
                             "flags given beside it win")


def json_object(text: str, where: str) -> dict[str, Any]:
    """A JSON object given on the command line; an error naming `where` (the command and its option) otherwise."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise RmevalError(f"{where}: not valid JSON ({error})") from error
    if not isinstance(value, dict):
        raise RmevalError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _settings(text: str | None, prog: str) -> dict[str, Any]:
    return json_object(text, f"{prog} {SETTINGS_FLAG}") if text else {}


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse `argv`, taking every option not given as a flag from `--settings` (add_settings_argument first).

    Required options may come from the settings: they are checked after the settings are applied.
    """
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument(SETTINGS_FLAG, default=None)
    known, _ = pre.parse_known_args(list(argv))
    settings = _settings(known.settings, parser.prog)
    actions = {action.dest: action for action in parser._actions if action.dest not in ("help", "settings")}
    unknown = sorted(set(settings) - set(actions))
    if unknown:
        raise RmevalError(f"{parser.prog} {SETTINGS_FLAG}: unknown key(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(actions))}")
    required = [action for action in actions.values() if action.required and action.dest in settings]
    for action in required:  # given by the settings: not required on the command line
        action.required = False
    try:
        for dest, value in settings.items():
            parser.set_defaults(**{dest: _value(parser.prog, actions[dest], dest, value)})
        return parser.parse_args(list(argv))
    finally:
        for action in required:
            action.required = True


def _typed(kind: Any, value: Any) -> Any:
    """`kind(value)`, refusing what a flag's text would not give: int(1.5) cuts where int("1.5") refuses."""
    typed = kind(value)
    if isinstance(value, float) and isinstance(typed, int) and typed != value:
        raise ValueError("not an integer")
    return typed


def _value(prog: str, action: argparse.Action, dest: str, value: Any) -> Any:
    """`value` as the option's flag would give it (its type applied, its choices checked); an error names `dest`."""
    where = f"{prog} {SETTINGS_FLAG}: {dest}"
    if action.nargs == 0 and value is not None and not isinstance(value, bool):  # a switch (--compile)
        raise RmevalError(f"{where}: expected true or false, got {value!r}")
    try:
        if value is not None and action.type is not None and not isinstance(value, (list, dict, bool)):
            value = _typed(action.type, value)
        elif isinstance(value, list) and action.type is not None:
            value = [_typed(action.type, item) for item in value]
    except (TypeError, ValueError, argparse.ArgumentTypeError) as error:
        raise RmevalError(f"{where}: {value!r} is not what the option takes ({error})") from error
    if action.choices is not None and value is not None:
        values = value if isinstance(value, list) else [value]
        bad = [item for item in values if item not in action.choices]
        if bad:
            raise RmevalError(f"{where}: {bad[0]!r} is not one of {', '.join(map(str, action.choices))}")
    return value
