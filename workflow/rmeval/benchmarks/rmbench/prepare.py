"""`rmeval rmbench-prepare`: RM-Bench's official JSON (local, or the Hub file at a revision) -> the scoring engine's
table (one row per response) + a manifest (the file's sha256, source, revision, prompts per domain: the lock reads
it). With `--expected-sha256` (a followed lock's) a file with other bytes is refused before anything is written."""

from __future__ import annotations

import argparse
from pathlib import Path

from rmeval import cli_settings
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rmbench-prepare", description=__doc__)
    parser.add_argument("--source", choices=["hub", "local"], default=schema_default("rmbench.source"))
    parser.add_argument("--path", help="the official total_dataset.json (source local)")
    parser.add_argument("--revision", default=schema_default("rmbench.revision"),
                        help="Hub revision (commit) of THU-KEG/RM-Bench (source hub)")
    parser.add_argument("--expected-sha256", help="refuse a file whose sha256 differs (a followed lock's)")
    parser.add_argument("--out", required=True, help="the prepared table (.parquet); the manifest goes beside it")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    from rmeval.benchmarks.rewardbench.loading import Source as HubSource
    from rmeval.benchmarks.rewardbench.prepare import resolved_revision
    from rmeval.benchmarks.rmbench.loading import Source, local_file, prepare, read_units
    from rmeval.benchmarks.rmbench.official import HF_FILE, HF_ID
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.io.hashing import sha256_file

    args = cli_settings.parse_args(build_parser(), argv)
    if args.source == "local" and not args.path:
        raise SystemExit("rmeval rmbench-prepare: rmbench.source is local but no path is given")
    source = Source(kind=args.source, path=args.path, revision=args.revision or None)
    file = local_file(source)
    digest = sha256_file(file)
    if args.expected_sha256 and digest != args.expected_sha256:
        raise RmevalError(f"{source.where}: sha256 {digest} differs from the followed lock's {args.expected_sha256}: "
                          "not the locked bytes (restore the locked file, or run without `lock:`)")
    table = prepare(read_units(file), source.where)
    out = Path(args.out)
    write_parquet_atomic(table, out)
    items = table.drop_duplicates("item")
    manifest = {
        "source": source.kind,
        **({"path": source.path} if source.kind == "local" else
           {"dataset": HF_ID, "file": HF_FILE, "revision": source.revision,
            "resolved_revision": resolved_revision(HubSource("hf", dataset=HF_ID, revision=source.revision))}),
        "sha256": digest, "prompts": len(items), "texts": len(table),
        "domains": {str(k): int(v) for k, v in items["subdomain"].value_counts().sort_index().items()},
    }
    write_json_atomic(manifest, out.with_name("manifest.json"))
    print(f"rmbench-prepare: {manifest['prompts']} prompts, {manifest['texts']} texts from {source.where} "
          f"(sha256 {digest[:16]})")
    return 0
