"""JudgeBench's section of the run's summary (its catalogue's `summary_section`): per split, each model's overall
score, highest first, from the per-subset table (its overall rows carry the mode, so a trivial baseline is named as
one); the length baseline is the reference a reader needs (46.0 % on gpt, 43.7 % on claude, on the published data)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext

BOTH_ORDERS = ("a pair counts when its two decisions (both orders) net above 0; a random reward scores 50 on "
               "average, a tie 0")


def render(title: str, rows: list[tuple[str, str, float | None, str | None]]) -> str:
    """The section; a row is (split, model, overall or None, the baseline's label or None)."""
    lines = [f"## {title}", ""]
    if not rows:
        return "\n".join([*lines, "No model was scored."]) + "\n"
    lines += [f"Overall accuracy per split and model, highest first (percent; {BOTH_ORDERS}):", ""]
    for split in dict.fromkeys(row[0] for row in rows):
        ranked = sorted((row for row in rows if row[0] == split),
                        key=lambda row: (row[2] is None, -(row[2] or 0.0), row[1]))
        lines.append(f"- {split}:")
        for _, model, score, baseline in ranked:
            name = f"{model} ({baseline}: a trivial baseline, not a reward model)" if baseline else model
            lines.append(f"  - {name}: {'no pairs' if score is None else f'{score:.1f}'}")
    return "\n".join(lines) + "\n"


def summary_section(context: RunContext) -> str:
    import csv

    from rmeval.benchmarks.judgebench.metrics import MODEL_MODES
    from rmeval.benchmarks.judgebench.official import OVERALL

    (key,) = context.benchmark.summary_inputs
    with context.path(key).open(newline="", encoding="utf-8") as handle:
        rows = [(row["split"], row["model"], float(row["accuracy"]) if row["accuracy"] else None,
                 None if row["mode"] in MODEL_MODES else row["mode"])
                for row in csv.DictReader(handle) if row["category"] == OVERALL]
    return render(context.benchmark.title, rows)
