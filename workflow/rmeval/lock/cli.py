"""`rmeval lock`: write a run's lock, compare two locks, or show a lock.

    rmeval lock write --settings '{"config_sha256": H, "metas": {"<benchmark>": [M.meta.json, ...]},
        "sections": {"<benchmark>": <its provider's inputs>}, "out": "results/lock.yaml",
        "summary": "results/lock_summary.csv"}'
    rmeval lock diff A.yaml B.yaml            # exit 0: identical, 1: they differ
    rmeval lock show L.yaml

The benchmarks' sections (and their inputs) are their providers' (rmeval.lock.section); a benchmark's locked data
is rebuilt from a lock by that benchmark's own command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rmeval.cli_settings import add_settings_argument, parse_args
from rmeval.errors import RmevalError
from rmeval.lock.section import SummaryRow


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON: {error}") from error
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def _add_write_arguments(write: argparse.ArgumentParser) -> None:
    write.add_argument("--config-sha256", required=True, help="the resolved config's hash")
    write.add_argument("--metas", type=_json_object, default={}, metavar="JSON",
                       help="every score .meta.json of the run, per benchmark: {benchmark: [paths]}")
    write.add_argument("--sections", type=_json_object, default={}, metavar="JSON",
                       help="each benchmark's lock section inputs: {benchmark: inputs}")
    write.add_argument("--out", type=Path, required=True)
    write.add_argument("--summary", type=Path, help="a CSV summary (for the report)")
    add_settings_argument(write)


def build_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """(the `rmeval lock` parser, its `write` subparser, which `--settings` fills)."""
    parser = argparse.ArgumentParser(prog="rmeval lock", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    write = sub.add_parser("write", help="write results/lock.yaml from a finished run")
    _add_write_arguments(write)
    diff = sub.add_parser("diff", help="what differs between two locks")
    diff.add_argument("first", type=Path)
    diff.add_argument("second", type=Path)
    show = sub.add_parser("show", help="print a lock's summary")
    show.add_argument("lock", type=Path)
    return parser, write


def summary_rows(lock) -> list[SummaryRow]:  # noqa: ANN001 - rmeval.lock.lockfile.Lock
    from rmeval.lock.section import section_providers

    rows = [("rmeval", lock.rmeval, f"config sha256 {lock.config_sha256[:16]}")]
    rows += [("software", name, str(value)) for name, value in sorted(lock.software.items())]
    providers = section_providers()
    for name, record in lock.sections.items():
        rows += providers[name].summary_rows(record)
    for name, model in sorted(lock.models.items()):
        extra = "".join(f", {k} {v if isinstance(v, str) else 'per table'}" for k, v in sorted(model.extra.items()))
        rows.append(("model", name, f"{model.adapter} {model.path} @ {model.revision}, {model.dtype}{extra}"))
    return rows


def _metas(value: Any) -> dict[str, list[str]]:
    """`metas` as given (a flag's or the settings' JSON object): benchmark -> list of paths."""
    if not isinstance(value, dict) or not all(
        isinstance(paths, list) and all(isinstance(path, str) for path in paths) for paths in value.values()
    ):
        raise RmevalError(f"rmeval lock write: metas: expected {{benchmark: [.meta.json paths]}}, got {value!r}")
    return value


def _write(args: argparse.Namespace) -> int:
    from rmeval.io.atomic import write_text_atomic
    from rmeval.lock.build import build_lock

    if not isinstance(args.sections, dict):
        raise RmevalError(f"rmeval lock write: sections: expected {{benchmark: inputs}}, got {args.sections!r}")
    lock = build_lock(args.config_sha256, _metas(args.metas), args.sections)
    write_text_atomic(lock.to_yaml(), args.out)
    if args.summary:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["item", "name", "locked"])
        writer.writerows(summary_rows(lock))
        write_text_atomic(buffer.getvalue(), args.summary)
    print(f"rmeval lock: sections of {', '.join(lock.sections) or 'no benchmark'}, {len(lock.models)} models "
          f"-> {args.out}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    parser, write = build_parser()
    if argv[:1] == ["write"]:
        return _write(parse_args(write, argv[1:]))
    args = parser.parse_args(argv)
    from rmeval.lock.lockfile import load_lock

    if args.action == "diff":
        from rmeval.lock.diff import diff_locks

        lines = diff_locks(load_lock(args.first), load_lock(args.second))
        print("\n".join(lines) if lines else f"{args.first} and {args.second} lock the same run")
        return 1 if lines else 0
    for item, name, locked in summary_rows(load_lock(args.lock)):
        print(f"{item:<9} {name:<28} {locked}")
    return 0
