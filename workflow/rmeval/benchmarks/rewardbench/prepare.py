"""`rmeval rewardbench-prepare`: one RewardBench version's rows -> the scoring engine's table + a manifest.

The manifest records where the rows came from (Hub id, split and revision, or the local file's sha256) and how many
rows and completions there are: the lock reads it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rmeval import cli_settings
from rmeval.benchmarks.rewardbench.loading import Source, prepare, read_rows
from rmeval.benchmarks.rewardbench.official import HF_IDS, HF_SPLITS
from rmeval.benchmarks.rewardbench.versions import VERSIONS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardbench-prepare", description=__doc__)
    parser.add_argument("--version", choices=sorted(VERSIONS), required=True, help="rewardbench or rewardbench2")
    parser.add_argument("--source", choices=["hf", "local"], default="hf")
    parser.add_argument("--path", help="local JSON / JSONL / Parquet file in the dataset's columns (source local)")
    parser.add_argument("--revision", help="Hub revision (commit) of the dataset (source hf)")
    parser.add_argument("--out", required=True, help="the prepared table (.parquet); the manifest goes beside it")
    cli_settings.add_settings_argument(parser)
    return parser


def resolved_revision(source: Source) -> str | None:
    """The commit the Hub serves for `source.revision` (a branch such as main, or a commit), for the lock; None for
    a local folder, offline, or when the Hub cannot say (the lock then keeps the configured revision)."""
    from rmeval.hub import hub_offline, looks_local

    if source.kind != "hf" or looks_local(str(source.dataset)) or hub_offline():
        return None
    try:
        from huggingface_hub import HfApi

        return HfApi().dataset_info(str(source.dataset), revision=source.revision).sha
    except Exception as error:  # noqa: BLE001 - the lock records what is known; the data loaded already
        print(f"rewardbench-prepare: could not resolve the Hub revision ({error})")
        return None


def main(argv: list[str]) -> int:
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.io.hashing import sha256_file

    args = cli_settings.parse_args(build_parser(), argv)
    version = VERSIONS[args.version]
    if args.source == "local" and not args.path:
        raise SystemExit(f"rmeval rewardbench-prepare: {version.name}.source is local but no path is given")
    source = Source(kind=args.source, path=args.path, dataset=HF_IDS[version.name], split=HF_SPLITS[version.name],
                    revision=args.revision or None)
    table = prepare(read_rows(source), version, source.where)
    out = Path(args.out)
    write_parquet_atomic(table, out)
    manifest = {
        "version": version.name, "source": source.kind,
        **({"path": source.path, "sha256": sha256_file(source.path)} if source.kind == "local" else
           {"dataset": source.dataset, "split": source.split, "revision": source.revision,
            "resolved_revision": resolved_revision(source)}),
        "rows": int(table["row_id"].nunique()), "completions": len(table),
        "subsets": {str(k): int(v) for k, v in table.drop_duplicates("row_id")["subset"].value_counts().sort_index()
                    .items()},
    }
    write_json_atomic(manifest, out.with_name("manifest.json"))
    print(f"rewardbench-prepare: {version.name}: {manifest['rows']} rows, {manifest['completions']} completions "
          f"from {source.where}")
    return 0
