"""`rmeval arxiv-select`: drop titles shared between groups, sample every group, write data + manifests."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.benchmarks.fairness.arxiv.cli_fetch import (
    GROUP_NAME,
    add_settings_arguments,
    command_settings,
    settings_from_args,
)
from rmeval.errors import RmevalError

# The `arxiv:` keys the selection reads (allow_fewer: false | true | balanced | keep).
SELECT_OPTIONS = ("papers_per_group", "seed", "allow_fewer", "candidate_factor", "categories_table")


def select_settings(arxiv: Mapping[str, Any]) -> dict[str, Any]:
    """`rmeval arxiv-select --settings` for a run, from its filled `arxiv:` section."""
    return command_settings(arxiv, SELECT_OPTIONS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval arxiv-select", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--groups", nargs="+", required=True, metavar="GROUP", help="every group, in config order"
    )
    parser.add_argument("--candidates-dir", default="results/arxiv", type=Path, help="arxiv-fetch outputs")
    parser.add_argument("--out-dir", default="results/data", type=Path, help="where {group}.parquet goes")
    add_settings_arguments(parser, SELECT_OPTIONS)
    return parser


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    for group in args.groups:
        if not GROUP_NAME.match(group):
            raise RmevalError(f"groups: group name {group!r} must match ^[a-z0-9_]+$")
    settings = settings_from_args(args)
    from rmeval.benchmarks.fairness.arxiv.select import select_groups

    manifests = select_groups(args.groups, settings, args.candidates_dir, args.out_dir)
    for group, manifest in manifests.items():
        c = manifest["counts"]
        print(
            f"arxiv-select {group}: eligible={c['eligible']} shared_title_dropped={c['shared_title_dropped']} "
            f"sampled={c['sampled']}",
        )  # stdout: the rule sends only stderr (warnings such as allow_fewer's, errors) to the console too
    return 0
