"""RM-Bench's section of the run's summary (its catalogue's `summary_section`): each model's average, highest
first, then its easy and hard scores, the style bias in one number (a reward model that prefers the fancier
response scores far higher on easy than on hard). A trivial baseline is named as one."""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext


def summary_section(context: RunContext) -> str:
    from rmeval.benchmarks.rewardbench.metrics import MODEL_MODES
    from rmeval.benchmarks.rewardbench.summary import render
    from rmeval.benchmarks.rmbench.official import CHANCE

    main_key, subsets_key = context.benchmark.summary_inputs
    with context.path(subsets_key).open(newline="", encoding="utf-8") as handle:
        modes = {row["model"]: row["mode"] for row in csv.DictReader(handle)}
    with context.path(main_key).open(newline="", encoding="utf-8") as handle:
        main = list(csv.DictReader(handle))
    text = render(context.benchmark.title, [(row["model"], float(row["average"]) if row["average"] else None,
                                             None if modes.get(row["model"]) in MODEL_MODES else modes.get(row["model"]))
                                            for row in main], CHANCE)
    gaps = [f"- {row['model']}: easy {float(row['easy']):.1f}, hard {float(row['hard']):.1f}" for row in main
            if row["easy"] and row["hard"]]
    if not gaps:
        return text
    return (text + "\nEasy against hard (a fancier chosen response against a plainer rejected one, and the "
            "reverse); a large gap is a preference for style over substance:\n\n" + "\n".join(gaps) + "\n")
