"""rmeval.cli_settings: one `--settings JSON` object gives a command its options (keys: the option dests); a flag
given beside it wins; an unknown key or a value the flag would refuse is an error naming the key."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from rmeval.cli_settings import add_settings_argument, parse_args, settings_json
from rmeval.errors import RmevalError


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {number}")
    return number


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval demo")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--rows", type=_positive, default=64)
    parser.add_argument("--mode", choices=("a", "b"), default="a")
    parser.add_argument("--groups", nargs="+", type=int, default=None)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--reference-model", default="ref")
    add_settings_argument(parser)
    return parser


def parse(*argv: str) -> argparse.Namespace:
    return parse_args(parser(), list(argv))


def test_settings_give_the_options_their_values():
    args = parse("--settings", settings_json({"out": "o", "alpha": 0.01, "rows": 3, "mode": "b", "groups": ["1", 2],
                                              "compile": True, "reference_model": None}))
    assert (args.out, args.alpha, args.rows, args.mode, args.groups) == (Path("o"), 0.01, 3, "b", [1, 2])
    assert args.compile is True and args.reference_model is None  # null stands for "none", as in the config
    defaults = parse("--out", "o")
    assert (defaults.alpha, defaults.rows, defaults.mode, defaults.compile) == (0.05, 64, "a", False)


def test_a_flag_beside_the_settings_wins_wherever_it_stands():
    settings = settings_json({"out": "o", "alpha": 0.01, "mode": "b"})
    assert parse("--settings", settings, "--alpha", "0.2").alpha == 0.2
    args = parse("--alpha", "0.3", "--mode", "a", "--settings", settings)
    assert (args.alpha, args.mode, args.out) == (0.3, "a", Path("o"))


def test_an_unknown_key_is_named_with_the_known_ones():
    with pytest.raises(RmevalError, match=r"rmeval demo --settings: unknown key\(s\) alpah; known: alpha, compile"):
        parse("--settings", '{"out": "o", "alpah": 0.01}')


@pytest.mark.parametrize(("settings", "message"), [
    ('{"alpha": "often"}', "rmeval demo --settings: alpha: 'often' is not what the option takes"),
    ('{"rows": 0}', "rows: 0 is not what the option takes (must be >= 1, got 0)"),
    ('{"rows": 1.5}', "rows: 1.5 is not what the option takes"),
    ('{"mode": "c"}', "mode: 'c' is not one of a, b"),
    ('{"groups": [1, "x"]}', "groups: [1, 'x'] is not what the option takes"),
    ('{"compile": "yes"}', "compile: expected true or false, got 'yes'"),
    ("{not json", "rmeval demo --settings: not valid JSON"),
    ('["out", "o"]', "expected a JSON object, got list"),
])
def test_a_bad_value_is_an_error_naming_its_key(settings, message):
    with pytest.raises(RmevalError) as raised:
        parse("--out", "o", "--settings", settings)
    assert message in str(raised.value)


def test_a_required_option_may_come_from_the_settings_and_stays_required_otherwise():
    built = parser()
    assert parse_args(built, ["--settings", '{"out": "o"}']).out == Path("o")
    assert next(action for action in built._actions if action.dest == "out").required  # restored afterwards
    with pytest.raises(SystemExit):
        parse("--settings", '{"alpha": 0.01}')  # argparse: the required --out is missing


def test_settings_json_is_canonical():
    assert settings_json({"b": 1, "a": Path("x")}) == settings_json({"a": "x", "b": 1}) == '{"a":"x","b":1}'
