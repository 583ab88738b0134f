"""What earlier runs left in results/: their models, and the record of each `rmeval run` that ran.

The command's models are the run's models: nothing accumulates. So the console names, first, the earlier models
found in results/ (the previous run's config, and score folders `results/scores/<benchmark>/<model>/`) that this run
leaves out, and how to keep them: `--model` again, or `--keep` (the previous run's model entries carried forward).
Each run that passed its checks appends one line to RUNS (when, the command, its models and benchmarks): the
summary and the report name, for every file not from this run, the run that wrote it (rmeval.run_outputs.strays).
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.run_command.launch import RUN_CONFIG
from rmeval.run_command.models import Resolved
from rmeval.run_outputs.strays import RUNS  # one JSON line per run `rmeval run` started

SCORES = "results/scores"


@dataclass(frozen=True)
class Earlier:
    """The models found in results/ before this run: the previous config's entries (by name), and every model that
    has a score folder, with its folders."""

    entries: Mapping[str, Any]
    scored: Mapping[str, tuple[str, ...]]

    @classmethod
    def read(cls, workdir: Path) -> Earlier:
        import yaml

        entries: dict[str, Any] = {}
        config = workdir / RUN_CONFIG
        try:
            document = yaml.safe_load(config.read_text(encoding="utf-8")) if config.is_file() else None
        except (OSError, yaml.YAMLError):
            document = None  # an unreadable config keeps nothing; the score folders still say which models ran
        listed = document.get("models") if isinstance(document, dict) else None
        for entry in listed if isinstance(listed, list) else []:
            name = entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, dict) else None
            if name:
                entries[str(name)] = entry
        scored: dict[str, list[str]] = {}
        for folder in sorted((workdir / SCORES).glob("*/*/")):
            if folder.is_dir():
                scored.setdefault(folder.name, []).append(f"{SCORES}/{folder.parent.name}/{folder.name}/")
        return cls(entries, {name: tuple(folders) for name, folders in scored.items()})

    def left_out(self, names: Sequence[str]) -> list[str]:
        """The earlier models this run does not have, in the previous config's order, then the others by name."""
        return [name for name in dict.fromkeys([*self.entries, *sorted(self.scored)]) if name not in names]

    def kept(self, names: Sequence[str]) -> list[Resolved]:
        """`--keep`: the previous run's model entries this command does not name, as they were written."""
        return [Resolved(name, entry, "--keep", f"kept from the previous run ({RUN_CONFIG})")
                for name, entry in self.entries.items() if name not in names]


def earlier_lines(earlier: Earlier, names: Sequence[str], keep: bool) -> list[str]:
    """The console's first lines: the earlier models in results/ that this run leaves out, and how to keep them."""
    left = earlier.left_out(names)
    if not left:
        return []
    where = "; ".join(f"{name} ({', '.join(earlier.scored.get(name, ())) or f'in {RUN_CONFIG}'})" for name in left)
    lines = [f"rmeval run: earlier models in results/ that are not in this run: {where}.",
             "  This run's tables, comparisons and summary cover only its own models (their score files stay on "
             "disk and are listed as not from this run)."]
    keepable = [name for name in left if name in earlier.entries]
    if keepable and not keep:
        lines.append(f"  To keep {', '.join(keepable)}: add `--model` for {'it' if len(keepable) == 1 else 'each'} "
                     f"again, or `--keep` (carries the previous run's models forward).")
    unknown = [name for name in left if name not in earlier.entries]
    if unknown:
        lines.append(f"  {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in the previous run's config: "
                     "to keep one, add `--model PATH --name NAME` for it.")
    return lines


def record_run(workdir: Path, argv: Sequence[str], models: Sequence[str], benchmarks: Sequence[str]) -> None:
    """Append this run to RUNS (after every check passed, just before Snakemake starts)."""
    path = workdir / RUNS
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "command": shlex.join(["rmeval", "run", *argv]), "models": list(models), "benchmarks": list(benchmarks)}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
