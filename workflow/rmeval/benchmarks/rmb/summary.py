"""RMB's section of the run's summary (`Benchmark.summary_section`): each scored model's overall and four headline
cells from rmb.csv, highest overall first; a trivial baseline is named as one (rmb_scenarios.csv holds each model's
mode); the chance row is the reference."""

from __future__ import annotations

import csv
import math
from typing import TYPE_CHECKING

from rmeval.benchmarks.rmb.layout import CELLS, OVERALL

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext

CHANCE_MODEL = "Random (chance)"


def _number(text: str) -> float:
    return float(text) if text not in ("", None) else math.nan


def render(title: str, rows: list[dict[str, str]], modes: dict[str, str]) -> str:
    from rmeval.benchmarks.rmb.metrics import MODEL_MODES

    lines = [f"## {title}", ""]
    chance = next((row for row in rows if row["model"] == CHANCE_MODEL), None)
    scored = [row for row in rows if row["model"] != CHANCE_MODEL]
    if not scored:
        return "\n".join([*lines, "No model was scored."]) + "\n"
    reference = (f"; a random reward model scores {_number(chance[OVERALL]):.1f}"
                 if chance and not math.isnan(_number(chance[OVERALL])) else "")
    lines += [f"Overall accuracy per model (percent, the mean of the four cells), highest first{reference}:", ""]
    for row in sorted(scored, key=lambda r: (math.isnan(_number(r[OVERALL])), -_number(r[OVERALL]) if not
                                             math.isnan(_number(r[OVERALL])) else 0.0, r["model"])):
        mode = modes.get(row["model"], "")
        name = row["model"] if mode in MODEL_MODES or not mode else \
            f"{row['model']} ({mode}: a trivial baseline, not a reward model)"
        overall = _number(row[OVERALL])
        cells = ", ".join(f"{cell.label} {_number(row[cell.column]):.1f}" for cell in CELLS
                          if not math.isnan(_number(row[cell.column])))
        lines.append(f"- {name}: {'not every cell ran' if math.isnan(overall) else f'{overall:.1f}'} ({cells})")
    return "\n".join(lines) + "\n"


def summary_section(context: RunContext) -> str:
    main_key, scenarios_key = context.benchmark.summary_inputs
    with context.path(main_key).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with context.path(scenarios_key).open(newline="", encoding="utf-8") as handle:
        modes = {row["model"]: row["mode"] for row in csv.DictReader(handle)}
    return render(context.benchmark.title, rows, modes)
