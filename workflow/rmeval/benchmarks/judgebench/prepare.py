"""`rmeval judgebench-prepare`: the JudgeBench split files (Hub at a revision, or a local folder) -> per split the
reward-model table and the pairwise-judge table (rmeval.benchmarks.judgebench.loading), and a manifest.

The manifest records each split file's origin (the Hub id, the configured revision and the commit it resolved to,
or the local path), its sha256 and whether those are the published bytes (the authors' GitHub file), its pairs and
their count per category: the lock reads it. With `--locked`
(split -> sha256, from the lock a run follows) a file whose bytes differ stops the stage before anything is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.benchmarks.judgebench.official import CATEGORIES, HF_ID, OVERALL
from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    from rmeval.config_check import schema_default

    parser = argparse.ArgumentParser(prog="rmeval judgebench-prepare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=["hub", "local"], default=schema_default("judgebench.source"))
    parser.add_argument("--path", help="local folder with the official .jsonl files (source local)")
    parser.add_argument("--revision", default=schema_default("judgebench.revision"),
                        help="Hub revision (commit) of the dataset (source hub)")
    parser.add_argument("--splits", nargs="+", default=schema_default("judgebench.splits"))
    parser.add_argument("--locked", default=None,
                        help="JSON object split -> sha256 the files must have (a run following a lock)")
    parser.add_argument("--out", required=True, help="folder: data/<split>.parquet, pairwise/<split>.parquet, "
                                                     "manifest.json")
    cli_settings.add_settings_argument(parser)
    return parser


def _locked(value: Any) -> dict[str, str]:
    if value in (None, "", {}):
        return {}
    if isinstance(value, str):
        import json

        value = json.loads(value)
    return {str(key): str(sha) for key, sha in dict(value).items()}


def main(argv: list[str]) -> int:
    from rmeval.benchmarks.judgebench.loading import (
        ITEM_COLUMNS,
        PAIRWISE_COLUMNS,
        SplitFile,
        frame,
        hub_file,
        item_rows,
        load_split,
        local_file,
        pairwise_rows,
        split_names,
    )
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.io.hashing import sha256_file

    args = cli_settings.parse_args(build_parser(), argv)
    if args.source == "local" and not args.path:
        raise RmevalError("rmeval judgebench-prepare: judgebench.source is local but no path is given")
    splits = split_names(list(args.splits), "judgebench.splits")
    locked = _locked(args.locked)
    files: list[SplitFile] = []
    for split in splits:
        if args.source == "local":
            path = local_file(args.path, split)
            files.append(SplitFile(split, path, sha256_file(path) if path.is_file() else ""))
        else:
            files.append(hub_file(split, args.revision or None))
    changed = [f"{item.path}: sha256 {item.sha256[:16]}..., the lock has {locked[item.split.name][:16]}..."
               for item in files if item.split.name in locked and locked[item.split.name] != item.sha256]
    if changed:
        raise RmevalError("judgebench: the data differ from the locked bytes (a rerun from the lock must read the "
                          "same files):\n" + "\n".join(changed))
    problems: list[str] = []
    loaded = []
    for item in files:
        try:
            loaded.append((item, load_split(item.path)))
        except RmevalError as error:
            problems.append(str(error))
    if problems:
        raise RmevalError("\n".join(problems))
    out = Path(args.out)
    manifest: dict[str, Any] = {"source": args.source,
                                **({"path": str(args.path)} if args.source == "local" else
                                   {"dataset": HF_ID, "revision": args.revision or None}),
                                "splits": {}}
    for item, pairs in loaded:
        write_parquet_atomic(frame(item_rows(pairs), ITEM_COLUMNS), out / "data" / f"{item.split.name}.parquet")
        write_parquet_atomic(frame(pairwise_rows(pairs), PAIRWISE_COLUMNS),
                             out / "pairwise" / f"{item.split.name}.parquet")
        counts = {category: sum(1 for pair in pairs if pair.category == category) for category in CATEGORIES}
        manifest["splits"][item.split.name] = {
            "file": str(item.path) if args.source == "local" else item.split.hub_file,
            "sha256": item.sha256, **({"resolved_revision": item.resolved_revision} if args.source == "hub" else {}),
            "pairs": len(pairs), "categories": {**counts, OVERALL: len(pairs)},
            "published_bytes": item.sha256 == item.split.release_sha256}
        same = "the published bytes" if item.sha256 == item.split.release_sha256 else "not the published bytes"
        print(f"judgebench-prepare: {item.split.name}: {len(pairs)} pairs from {item.path} ({same})")
    write_json_atomic(manifest, out / "manifest.json", sort_keys=False)  # splits in config order
    return 0
