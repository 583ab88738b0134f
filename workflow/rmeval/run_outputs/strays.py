"""The files in results/ that this run did not write: "Not from this run".

results/ keeps what earlier runs wrote: a table of a benchmark this run leaves out, a figure of a model it does not
score, a model's score folder. Each is named in the summary and the report with when it was written and the run that
wrote it (the last run recorded in results/.runs.jsonl, rmeval.run_command.previous, that could have: it started
before the file was written and had its benchmark or model), so that every file in results/ either belongs to the run
that lock.yaml and summary.md describe or is named as not. `rmeval run --clean` moves them to
results/.previous/<UTC time>/ (nothing is deleted). Looked at: results/tables/ and results/figures/ (files), and
results/scores/<benchmark>/<model>/ (folders). Light: run at Snakefile parse time.
"""

from __future__ import annotations

import calendar
import json
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks import all_benchmarks
from rmeval.benchmarks.catalogue import SCORES_ROOT

RESULTS = "results"
RUNS = "results/.runs.jsonl"  # written by `rmeval run` (rmeval.run_command.previous)
PREVIOUS = "results/.previous"
FOLDERS = ("results/tables", "results/figures")
SLACK_S = 2.0  # a file's time may precede its run's record by this much (filesystem time resolution)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class Stray:
    """A file (or a score folder, ending in "/") in results/ this run did not write."""

    path: str  # relative to the run directory
    written: str  # its last change, UTC
    run: str  # the run that wrote it, in words

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "written": self.written, "run": self.run}


def own_outputs(plan: Any) -> list[str]:
    """Every file the run asks for (common.smk `all_outputs`): each benchmark's targets, the run-level files, the
    lock. `plan`: rmeval.run_plan.RunPlan."""
    from rmeval.run_outputs.catalogue import RUN

    return [path for name in plan.benchmarks for path in plan.targets(name)] + RUN.targets() + ["results/lock.yaml"]


def _records(root: Path) -> list[dict[str, Any]]:
    path = root / RUNS
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash names no run
        if isinstance(record, dict) and "started" in record:
            records.append(record)
    return records


def _owner(path: str) -> str | None:
    """The benchmark whose catalogue declares `path` (a table or figure), or whose score folder holds it."""
    for bench in all_benchmarks():
        if path.startswith(f"{SCORES_ROOT}/{bench.name}/"):
            return bench.name
        for output in bench.outputs:
            if not output.per_model and path in output.files:
                return bench.name
    return None


def _writer(path: str, changed: float, records: Sequence[dict[str, Any]]) -> str:
    owner = _owner(path)
    model = path.rstrip("/").rsplit("/", 1)[-1] if path.startswith(SCORES_ROOT) else None
    for record in reversed(records):
        started = calendar.timegm(time.strptime(record["started"], TIME_FORMAT))
        if started > changed + SLACK_S:
            continue
        if (owner is None or owner in record.get("benchmarks", [])) and \
                (model is None or model in record.get("models", [])):
            return f"`{record['command']}` (started {record['started']})"
    return "an earlier run that `rmeval run` did not record (plain Snakemake, or one before the record began)"


def _stamp(path: Path) -> tuple[float, str]:
    changed = path.stat().st_mtime
    return changed, time.strftime(TIME_FORMAT, time.gmtime(changed))


def not_from_this_run(root: Path, own: Iterable[str]) -> list[Stray]:
    """The tables, figures and score folders in `root`/results that are not among `own` (the run's outputs)."""
    own = set(own)
    own_folders = {path.rsplit("/", 1)[0] + "/" for path in own if path.startswith(SCORES_ROOT + "/")}
    records = _records(root)
    found: list[tuple[str, Path]] = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and relative not in own and not path.name.startswith("."):
                found.append((relative, path))
    for path in sorted((root / SCORES_ROOT).glob("*/*/")):
        relative = path.relative_to(root).as_posix() + "/"
        if path.is_dir() and relative not in own_folders:
            found.append((relative, path))
    strays = []
    for relative, path in found:
        changed, written = _stamp(path)
        strays.append(Stray(relative, written, _writer(relative, changed, records)))
    return strays


def move_away(root: Path, strays: Sequence[Stray]) -> Path | None:
    """`--clean`: move each to results/.previous/<UTC time>/, keeping its path under results/; the folder."""
    if not strays:
        return None
    target = root / PREVIOUS / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for stray in strays:
        source = root / stray.path.rstrip("/")
        destination = target / Path(stray.path.rstrip("/")).relative_to(RESULTS)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(source), str(destination))
    return target


def _these(strays: Sequence[Any]) -> str:
    return ("This file (or folder) in results/ was" if len(strays) == 1
            else f"These {len(strays)} files and folders in results/ were")


def markdown_section(strays: Sequence[dict[str, str]]) -> str:
    """The summary's "Not from this run" section (strays as JSON)."""
    lines = ["## Not from this run", "",
             f"{_these(strays)} written by earlier runs, not by the run this summary and lock.yaml describe; "
             "`rmeval run --clean` moves them to results/.previous/ (nothing is deleted).", ""]
    lines += [f"- `{stray['path']}`: written {stray['written']} by {stray['run']}" for stray in strays]
    return "\n".join(lines) + "\n"


def rst_section(strays: Sequence[dict[str, str]]) -> str:
    """The report's "Not from this run" section: named, not shown (the report holds only this run's files)."""
    lines = ["Not from this run", "-----------------", "",
             f"{_these(strays)} written by earlier runs; this report does not show them. "
             "``rmeval run --clean`` moves them to ``results/.previous/`` (nothing is deleted).", ""]
    lines += [f"* ``{stray['path']}``: written {stray['written']} by {stray['run'].replace('`', '``')}"
              for stray in strays]
    return "\n".join(lines)
