"""`rmeval corpus-prepare`: a grouped corpus (`corpus:` of the config) -> `results/data/{group}.parquet` + manifests.

The rule passes `--settings '{"corpus_json": ..., "groups_json": ..., "out_dir": ...}'` (the corpus section with
its path located, the groups in config order); run by hand, give the same as flags.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rmeval import cli_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval corpus-prepare", description=__doc__)
    parser.add_argument("--corpus-json", required=True, help="the config's `corpus:` section as JSON")
    parser.add_argument("--groups-json", required=True, help="JSON {group: [raw labels]}, in config order")
    parser.add_argument("--out-dir", required=True, type=Path, help="where {group}.parquet and manifests go")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    from rmeval.benchmarks.fairness.corpus.prepare import prepare, write
    from rmeval.benchmarks.fairness.corpus.source import load

    args = cli_settings.parse_args(build_parser(), argv)
    corpus = cli_settings.json_object(args.corpus_json, "--corpus-json")
    groups = cli_settings.json_object(args.groups_json, "--groups-json")
    loaded = load(corpus)
    prepared = prepare(loaded.frame, groups, corpus, loaded.where)
    for warning in prepared.warnings:
        print(f"warning: {loaded.where}: {warning}", file=sys.stderr)
    if prepared.unmapped:
        shown = ", ".join(f"{label} {n}" for label, n in prepared.unmapped.items())
        print(f"{loaded.where}: dropped {sum(prepared.unmapped.values())} row(s) whose label no group names: {shown}",
              file=sys.stderr)
    if corpus["source"] == "hf" and not corpus["hf"].get("revision"):
        print(f"warning: {loaded.where}: no corpus.hf.revision: the lock records the rows' hashes, but a rerun may "
              "read another version of the dataset", file=sys.stderr)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    written = write(prepared, groups, corpus, loaded.source, args.out_dir)
    for group, manifest in written.items():
        print(f"{group}: {manifest['output']['rows']} rows -> {manifest['output']['path']}")
    return 0
