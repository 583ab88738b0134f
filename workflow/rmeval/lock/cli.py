"""`rmeval lock`: write a run's lock, compare two locks, rebuild the locked groups, or show a lock.

    rmeval lock write --groups G ... --data-dir results/data --metas M.meta.json ... --config-sha256 H \
        --out results/lock.yaml --summary results/lock_summary.csv
    rmeval lock diff A.yaml B.yaml            # exit 0: identical, 1: they differ
    rmeval lock rebuild --lock L.yaml --groups-json '{...}' --config-json '{arxiv...}' --out-dir results/data
    rmeval lock show L.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval lock", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    write = sub.add_parser("write", help="write results/lock.yaml from a finished run")
    write.add_argument("--groups", nargs="+", required=True, help="every group, in config order")
    write.add_argument("--data-dir", type=Path, default=Path("results/data"))
    write.add_argument("--metas", nargs="*", default=[], type=Path, help="every score .meta.json of the run")
    write.add_argument("--config-sha256", required=True)
    write.add_argument("--out", type=Path, required=True)
    write.add_argument("--summary", type=Path, help="a CSV summary (for the report)")
    diff = sub.add_parser("diff", help="what differs between two locks")
    diff.add_argument("first", type=Path)
    diff.add_argument("second", type=Path)
    rebuild = sub.add_parser("rebuild", help="rebuild the locked group tables (API id_list or a snapshot)")
    rebuild.add_argument("--lock", type=Path, required=True)
    rebuild.add_argument("--groups-json", required=True, help="the config's `groups:` as JSON")
    rebuild.add_argument("--config-json", default="{}", help="the config's `arxiv:` mapping as JSON")
    rebuild.add_argument("--out-dir", type=Path, default=Path("results/data"))
    show = sub.add_parser("show", help="print a lock's summary")
    show.add_argument("lock", type=Path)
    return parser


def summary_rows(lock) -> list[tuple[str, str, str]]:  # noqa: ANN001 - rmeval.lock.lockfile.Lock
    rows = [("rmeval", lock.rmeval, f"config sha256 {lock.config_sha256[:16]}")]
    rows += [("software", name, str(value)) for name, value in sorted(lock.software.items())]
    for name, group in lock.groups.items():
        versioned = sum(1 for paper in group.papers if paper.version)
        rows.append(("group", name, f"{len(group.papers)} papers ({versioned} with versions), "
                                    f"table sha256 {group.table_sha256[:16]}"))
    for name, model in sorted(lock.models.items()):
        extra = "".join(f", {k} {v if isinstance(v, str) else 'per table'}" for k, v in sorted(model.extra.items()))
        rows.append(("model", name, f"{model.adapter} {model.path} @ {model.revision}, {model.dtype}{extra}"))
    return rows


def _write(args: argparse.Namespace) -> int:
    from rmeval import __version__
    from rmeval.io.atomic import write_text_atomic
    from rmeval.lock.build import arxiv_section, group_lock, model_locks, software_versions
    from rmeval.lock.lockfile import Lock

    manifests = [args.data_dir / f"{g}.manifest.json" for g in args.groups]
    lock = Lock(
        rmeval=__version__,
        software=software_versions(args.metas),
        config_sha256=args.config_sha256,
        arxiv=arxiv_section(manifests),
        groups={g: group_lock(g, args.data_dir / f"{g}.parquet", m) for g, m in zip(args.groups, manifests, strict=True)},
        models=model_locks(args.metas),
    )
    write_text_atomic(lock.to_yaml(), args.out)
    if args.summary:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["item", "name", "locked"])
        writer.writerows(summary_rows(lock))
        write_text_atomic(buffer.getvalue(), args.summary)
    print(f"rmeval lock: {len(lock.groups)} groups, {len(lock.models)} models -> {args.out}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from rmeval.lock.lockfile import load_lock

    if args.action == "write":
        return _write(args)
    if args.action == "diff":
        from rmeval.lock.diff import diff_locks

        lines = diff_locks(load_lock(args.first), load_lock(args.second))
        print("\n".join(lines) if lines else f"{args.first} and {args.second} lock the same run")
        return 1 if lines else 0
    if args.action == "show":
        for item, name, locked in summary_rows(load_lock(args.lock)):
            print(f"{item:<9} {name:<28} {locked}")
        return 0
    from rmeval.benchmarks.fairness.arxiv.cli_fetch import settings_from_args
    from rmeval.lock.rebuild import rebuild

    try:
        groups = json.loads(args.groups_json)
    except ValueError as error:
        raise RmevalError(f"--groups-json is not valid JSON: {error}") from error
    settings = settings_from_args(argparse.Namespace(config_json=args.config_json))
    rebuild(load_lock(args.lock), str(args.lock), groups, settings, args.out_dir)
    return 0
