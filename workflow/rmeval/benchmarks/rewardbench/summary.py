"""RewardBench 1 and 2's sections of the run summary (`results/summary.md`): each scored model's overall score and
its parts, beside chance, from the benchmark's own table (rewardbench_sections.csv / rewardbench2_scores.csv)."""

from __future__ import annotations

from typing import Any

from rmeval.run_outputs.context import RunContext

OVERALL = "Overall"


def _lines(frame: Any, part: str) -> list[str]:
    """One line per scored model (table order): overall, then its parts; the chance row last."""
    lines, chance = [], None
    for model, rows in frame.groupby("model", sort=False):
        scores = {str(row[part]): float(row["score"]) for _, row in rows.iterrows() if row["score"] == row["score"]}
        overall = scores.pop(OVERALL, None)
        parts = ", ".join(f"{name} {value:.1f}" for name, value in scores.items())
        head = f"overall {overall:.1f}%" if overall is not None else "no overall score (a part did not run)"
        if (rows["mode"] == "baseline").all():
            chance = f"- Chance: {head} ({parts})." if overall is not None else f"- Chance: {parts}."
        else:
            lines.append(f"- **{model}** ({rows['mode'].iloc[0]}): {head} ({parts}).")
    return lines + ([chance] if chance else [])


def _section(context: RunContext, key: str, part: str, what: str) -> str:
    import pandas as pd

    path = context.path(key)
    frame = pd.read_csv(path)
    table = path.with_suffix(".md").name
    return "\n".join([f"## {context.benchmark.title}", "", what, "", *_lines(frame, part), "",
                      f"Per {part}: {table}; each model's scores in the official results layout: "
                      f"results/{context.benchmark.name}/official/.", ""])


def v1_section(context: RunContext) -> str:
    return _section(context, "sections", "section",
                    "Accuracy (%) of choosing the preferred completion, per section (Chat, Chat Hard, Safety, "
                    "Reasoning; the official example-count weights); overall = their mean.")


def v2_section(context: RunContext) -> str:
    return _section(context, "scores", "subset",
                    "Score (%) per subset (best-of-N accuracy; Ties: the official weighted score); overall = the "
                    "mean of the six subsets.")
