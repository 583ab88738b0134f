"""A RewardBench version's section of the run's summary (`Benchmark.summary_section` of both versions): each
scored model's overall score from its overall table (v1's sections, v2's scores: the `Overall` rows, with their
mode), highest first, so that a run of RewardBench alone still says in words what it found. A trivial baseline
(a mode such as `length baseline`) is named as one, and so is a published model (mode `published`); the chance row
is the sentence's reference value. A run with only some of the official subsets (its per-subset table says which
ran) has its Overall marked † and says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext


def render(title: str, rows: list[tuple[str, float | None, str | None]], chance: float, partial: str = "") -> str:
    """The section: a heading, then one line per model (highest first; a model with no overall score last).
    A row is (model, overall score or None, the baseline's label or None for a reward model). `partial`: a partial
    run's note (official.partial_note): each score carries its mark and the note follows."""
    from rmeval.benchmarks.rewardbench.metrics import PUBLISHED
    lines = [f"## {title}", ""]
    if not rows:
        return "\n".join([*lines, "No model was scored."]) + "\n"
    ranked = sorted(rows, key=lambda row: (row[1] is None, -(row[1] or 0.0), row[0]))
    lines.append(f"Overall score per model, highest first (percent; a random reward model scores {chance:g}):")
    lines.append("")
    mark = f" {partial.split(' ', 1)[0]}" if partial else ""
    for model, score, baseline in ranked:
        name = (f"{model} (published per-item results, not run here)" if baseline == PUBLISHED
                else f"{model} ({baseline}: a trivial baseline, not a reward model)" if baseline else model)
        lines.append(f"- {name}: {'not every subset ran' if score is None else f'{score:.2f}{mark}'}")
    if partial:
        lines += ["", f"{partial}."]
    return "\n".join(lines) + "\n"


def summary_section(context: RunContext) -> str:
    import csv

    from rmeval.benchmarks.rewardbench.metrics import CHANCE, MODEL_MODES, OVERALL, PUBLISHED
    from rmeval.benchmarks.rewardbench.official import partial_note
    from rmeval.benchmarks.rewardbench.versions import VERSIONS

    def read(key: str) -> list[dict[str, str]]:
        with context.path(key).open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))

    overall_key, subsets_key = context.benchmark.summary_inputs[0], context.benchmark.summary_inputs[-1]
    rows = [(row["model"], float(row["score"]) if row["score"] else None,
             None if row["mode"] in MODEL_MODES and row["mode"] != PUBLISHED else row["mode"])
            for row in read(overall_key)
            if row.get("subset", row.get("section")) == OVERALL and row["mode"] != CHANCE]
    partial = partial_note(context.benchmark.name, {row["subset"] for row in read(subsets_key)})
    return render(context.benchmark.title, rows, VERSIONS[context.benchmark.name].chance, partial)
