"""`rmeval arxiv-from-lock`: rebuild the locked group tables (`arxiv.source: lock`) from the arXiv API's `id_list`
or a snapshot, or fail naming every paper that changed.

    rmeval arxiv-from-lock --lock L.yaml --groups-json '{"physics": [...], ...}' --config-json '{arxiv...}' \
        --out-dir results/data
    rmeval arxiv-from-lock --settings '{"lock": ..., "groups_json": ..., "config_json": ..., "out_dir": ...}'
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rmeval.cli_settings import add_settings_argument, parse_args
from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval arxiv-from-lock", description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, required=True, help="the lock to rebuild from (config key `lock`)")
    # JSON text, not an object, so that the groups keep the config's order inside a sorted --settings object.
    parser.add_argument("--groups-json", required=True, help="the config's `groups:` as JSON (config order)")
    parser.add_argument("--config-json", default="{}", help="the config's `arxiv:` mapping as JSON")
    parser.add_argument("--out-dir", type=Path, default=Path("results/data"))
    add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    args = parse_args(build_parser(), argv)
    from rmeval.benchmarks.fairness.arxiv.cli_fetch import settings_from_args
    from rmeval.benchmarks.fairness.lock.rebuild import rebuild
    from rmeval.lock.lockfile import load_lock

    try:
        groups = json.loads(args.groups_json)
    except ValueError as error:
        raise RmevalError(f"--groups-json is not valid JSON: {error}") from error
    if not isinstance(groups, dict):
        raise RmevalError(f"--groups-json must be a JSON object (the config's `groups:`), got {args.groups_json!r}")
    settings = settings_from_args(argparse.Namespace(config_json=args.config_json))
    rebuild(load_lock(args.lock), str(args.lock), groups, settings, args.out_dir)
    return 0
