"""`rmeval arxiv-fetch`: one group's single-group candidate papers from a snapshot or the live API.

Writes OUT_DIR/{group}.candidates.parquet (the bounded seeded candidate pool), OUT_DIR/{group}.eligible.u64
(id and title hashes of every eligible paper, for exact de-duplication and the cross-group title filter)
and OUT_DIR/{group}.fetch.json (source, counts so far, settings).

The arXiv settings are options named like the config's `arxiv:` keys (`--papers-per-group`; those of `arxiv.api:`
without the prefix: `--page-size`), each defaulting to the schema's value; the workflow passes them all as one
`--settings` JSON object (`fetch_settings`), and flags given beside it win.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

GROUP_NAME = re.compile(r"^[a-z0-9_]+$")


def number(value: Any) -> float | int:
    """A number option: a JSON number from --settings stays as written (2 stays 2, as the fetch summary records
    it), text from a flag becomes a float."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return float(value)


# Option dest -> (key under the config's `arxiv:`, type). The same dest names the key in --settings.
ARXIV_OPTIONS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "source": ("source", str),
    "snapshot": ("snapshot", str),
    "papers_per_group": ("papers_per_group", int),
    "seed": ("seed", int),
    "allow_fewer": ("allow_fewer", str),
    "candidate_factor": ("candidate_factor", number),
    "date_from": ("date_from", str),
    "date_to": ("date_to", str),
    "categories_table": ("categories_table", str),
    "base_url": ("api.base_url", str),
    "page_size": ("api.page_size", int),
    "delay_seconds": ("api.delay_seconds", number),
    "retries": ("api.retries", int),
    "backoff_seconds": ("api.backoff_seconds", number),
    "max_backoff_seconds": ("api.max_backoff_seconds", number),
    "timeout_seconds": ("api.timeout_seconds", number),
    "max_results": ("api.max_results", int),
    "cache_dir": ("api.cache_dir", str),
}
# allow_fewer concerns the selection only (the fetch keeps a candidate pool whatever it is).
FETCH_OPTIONS = tuple(dest for dest in ARXIV_OPTIONS if dest != "allow_fewer")


def _schema_default(key: str) -> Any:
    """The schema's default of `arxiv.<key>`, or None for a key without one (source, snapshot)."""
    try:
        return schema_default(f"arxiv.{key}")
    except KeyError:
        return None


def add_settings_arguments(parser: argparse.ArgumentParser, dests: Iterable[str]) -> None:
    """The arXiv options `dests` (ARXIV_OPTIONS), defaults from the schema, and `--settings`."""
    for dest in dests:
        key, kind = ARXIV_OPTIONS[dest]
        parser.add_argument("--" + dest.replace("_", "-"), dest=dest, type=kind, default=_schema_default(key),
                            help=f"arxiv.{key} (default: %(default)s)")
    cli_settings.add_settings_argument(parser)


def arxiv_settings(values: Mapping[str, Any]) -> Any:
    """ArxivSettings from option values (dest -> value; None: not given, the dataclass default applies)."""
    from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings

    raw: dict[str, Any] = {}
    for dest, (key, _) in ARXIV_OPTIONS.items():
        value = values.get(dest)
        if value is None:
            continue
        if key.startswith("api."):
            raw.setdefault("api", {})[key.removeprefix("api.")] = value
        else:
            raw[key] = value
    return ArxivSettings.from_mapping(raw)


def settings_from_args(args: argparse.Namespace) -> Any:
    """ArxivSettings of a parsed arxiv-fetch / arxiv-select command line.

    A namespace holding only `config_json` is `rmeval lock rebuild --config-json` (the config's nested `arxiv:`
    mapping as JSON), until that command moves into the fairness package and reads the mapping itself.
    """
    from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings

    values = vars(args)
    if "config_json" not in values:
        return arxiv_settings(values)
    try:
        raw = json.loads(values["config_json"]) if values["config_json"] else {}
    except ValueError as error:
        raise RmevalError(f"--config-json is not valid JSON: {error}") from error
    if not isinstance(raw, dict):
        raise RmevalError("--config-json must be a JSON object (the config's `arxiv:` mapping)")
    return ArxivSettings.from_mapping(raw)


def command_settings(arxiv: Mapping[str, Any], dests: Iterable[str]) -> dict[str, Any]:
    """The `--settings` of an arXiv command (its option dests) from the config's filled `arxiv:` section."""
    settings: dict[str, Any] = {}
    for dest in dests:
        section: Any = arxiv
        key = ARXIV_OPTIONS[dest][0]
        *parents, leaf = key.split(".")
        for parent in parents:
            section = section.get(parent) or {}
        if leaf in section:
            settings[dest] = section[leaf]
    return settings


def fetch_settings(arxiv: Mapping[str, Any], snapshot: str | None) -> dict[str, Any]:
    """`rmeval arxiv-fetch --settings` for a run: its `arxiv:` section, with the snapshot located (`snapshot`,
    when the source reads one)."""
    settings = command_settings(arxiv, FETCH_OPTIONS)
    if snapshot:
        settings["snapshot"] = snapshot
    return settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval arxiv-fetch", description=__doc__.splitlines()[0])
    parser.add_argument("--group", required=True, help="group name (lowercase letters, digits, underscore)")
    parser.add_argument(
        "--categories",
        nargs="+",
        required=True,
        metavar="CAT",
        help="the group's arXiv categories or archives",
    )
    parser.add_argument("--out-dir", default="results/arxiv", type=Path, help="where candidates go")
    add_settings_arguments(parser, FETCH_OPTIONS)
    return parser


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    if not GROUP_NAME.match(args.group):
        raise RmevalError(f"groups: group name {args.group!r} must match ^[a-z0-9_]+$")
    settings = settings_from_args(args)
    from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates

    summary = fetch_candidates(args.group, args.categories, settings, args.out_dir)
    counts = " ".join(f"{k}={v}" for k, v in summary["counts"].items() if v)
    print(f"arxiv-fetch {args.group}: {counts}", file=sys.stderr)
    return 0
