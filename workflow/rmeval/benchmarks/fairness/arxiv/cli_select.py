"""`rmeval arxiv-select`: drop titles shared between groups, sample every group, write data + manifests."""

from __future__ import annotations

import argparse
from pathlib import Path

from rmeval.benchmarks.fairness.arxiv.cli_fetch import GROUP_NAME, add_settings_arguments, settings_from_args
from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval arxiv-select", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--groups", nargs="+", required=True, metavar="GROUP", help="every group, in config order"
    )
    parser.add_argument("--candidates-dir", default="results/arxiv", type=Path, help="arxiv-fetch outputs")
    parser.add_argument("--out-dir", default="results/data", type=Path, help="where {group}.parquet goes")
    parser.add_argument("--allow-fewer", dest="allow_fewer", help="false | true | balanced | keep")
    add_settings_arguments(parser, ["papers_per_group", "seed", "candidate_factor", "categories_table"])
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    for group in args.groups:
        if not GROUP_NAME.match(group):
            raise RmevalError(f"groups: group name {group!r} must match ^[a-z0-9_]+$")
    settings = settings_from_args(args)
    if args.allow_fewer is not None:
        from rmeval.benchmarks.fairness.arxiv.settings import parse_allow_fewer

        settings.allow_fewer = parse_allow_fewer(args.allow_fewer)
    from rmeval.benchmarks.fairness.arxiv.select import select_groups

    manifests = select_groups(args.groups, settings, args.candidates_dir, args.out_dir)
    for group, manifest in manifests.items():
        c = manifest["counts"]
        print(
            f"arxiv-select {group}: eligible={c['eligible']} shared_title_dropped={c['shared_title_dropped']} "
            f"sampled={c['sampled']}",
        )  # stdout: the rule sends only stderr (warnings such as allow_fewer's, errors) to the console too
    return 0
