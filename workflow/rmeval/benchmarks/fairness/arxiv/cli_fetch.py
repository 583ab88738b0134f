"""`rmeval arxiv-fetch`: one group's single-group candidate papers from a snapshot or the live API.

Writes OUT_DIR/{group}.candidates.parquet (the bounded seeded candidate pool), OUT_DIR/{group}.eligible.u64
(id and title hashes of every eligible paper, for exact de-duplication and the cross-group title filter)
and OUT_DIR/{group}.fetch.json (source, counts so far, settings).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

GROUP_NAME = re.compile(r"^[a-z0-9_]+$")

# flag -> (dotted config key, type); explicit flags override --config-json
_OVERRIDES: dict[str, tuple[str, Any]] = {
    "source": ("source", str),
    "snapshot": ("snapshot", str),
    "papers_per_group": ("papers_per_group", int),
    "seed": ("seed", int),
    "candidate_factor": ("candidate_factor", float),
    "date_from": ("date_from", str),
    "date_to": ("date_to", str),
    "categories_table": ("categories_table", str),
    "base_url": ("api.base_url", str),
    "page_size": ("api.page_size", int),
    "delay_seconds": ("api.delay_seconds", float),
    "retries": ("api.retries", int),
    "backoff_seconds": ("api.backoff_seconds", float),
    "timeout_seconds": ("api.timeout_seconds", float),
    "max_results": ("api.max_results", int),
    "cache_dir": ("api.cache_dir", str),
}


def add_settings_arguments(parser: argparse.ArgumentParser, keys: list[str] | None = None) -> None:
    parser.add_argument(
        "--config-json", help="the config's `arxiv:` mapping as JSON; flags below override it"
    )
    for flag, (key, kind) in _OVERRIDES.items():
        if keys is None or flag in keys:
            parser.add_argument("--" + flag.replace("_", "-"), dest=flag, type=kind, help=f"arxiv.{key}")


def settings_from_args(args: argparse.Namespace) -> Any:
    from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings

    try:
        raw = json.loads(args.config_json) if args.config_json else {}
    except ValueError as error:
        raise RmevalError(f"--config-json is not valid JSON: {error}") from error
    if not isinstance(raw, dict):
        raise RmevalError("--config-json must be a JSON object (the config's `arxiv:` mapping)")
    for flag, (key, _) in _OVERRIDES.items():
        value = getattr(args, flag, None)
        if value is None:
            continue
        if key.startswith("api."):
            raw.setdefault("api", {})
            raw["api"] = dict(raw["api"] or {}, **{key[4:]: value})
        else:
            raw[key] = value
    return ArxivSettings.from_mapping(raw)


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
    add_settings_arguments(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if not GROUP_NAME.match(args.group):
        raise RmevalError(f"groups: group name {args.group!r} must match ^[a-z0-9_]+$")
    settings = settings_from_args(args)
    from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates

    summary = fetch_candidates(args.group, args.categories, settings, args.out_dir)
    counts = " ".join(f"{k}={v}" for k, v in summary["counts"].items() if v)
    print(f"arxiv-fetch {args.group}: {counts}", file=sys.stderr)
    return 0
