"""LLM judges in the fairness tables: rmeval can score the fairness rows with a `direct` judge (a 1-10 rating of
each abstract for its title), which Song et al. (2025) did not: their protocol excluded judges. Every table that
names such a model says so: in Markdown and LaTeX the model's name carries the suffix `JUDGE_SUFFIX` and the
footnote explains it; in CSV (kept machine-readable, names unchanged) a `note` column holds the same words on the
judge's rows. Judges are known from their score sidecars (`{group}.meta.json`, adapter `judge`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from rmeval.benchmarks.fairness.stats.tables import Table
from rmeval.models.catalogue import ADAPTERS

JUDGE_SUFFIX = " (LLM judge†)"
JUDGE_NOTE = "LLM judge (1-10 rating); not part of Song et al.'s protocol"
FOOTNOTE = ("† An LLM judge rating each abstract for its title from 1 to 10: not part of Song et al. (2025)'s "
            "protocol, which excluded judges.")
MODEL_COLUMNS = ("model", "model_a", "model_b", "reference_model")


def judge_models(scores_dir: Path, models: list[str]) -> set[str]:
    """The models whose score sidecars name an LLM-judge adapter (rmeval.models.catalogue)."""
    found = set()
    for model in models:
        for meta in sorted((scores_dir / model).glob("*.meta.json")):
            try:
                adapter = json.loads(meta.read_text()).get("adapter")
            except (OSError, ValueError):
                continue
            entry = ADAPTERS.get(adapter)
            if entry is not None and entry.judge:  # the adapter catalogue says which adapters are LLM judges
                found.add(model)
            break
    return found


def labelled(table: Table, judges: set[str]) -> tuple[Table, Table]:
    """(the CSV's table, the Markdown / LaTeX table), labelled when the table names a judge."""
    columns = [c for c in MODEL_COLUMNS if c in table.frame.columns]
    if not judges or not any(table.frame[c].isin(judges).any() for c in columns):
        return table, table
    is_judge = table.frame[columns].isin(judges).any(axis=1)
    csv_frame = table.frame.copy()
    csv_frame["note"] = [JUDGE_NOTE if flag else "" for flag in is_judge]
    shown = table.frame.copy()
    for column in columns:
        shown[column] = [f"{v}{JUDGE_SUFFIX}" if v in judges else v for v in shown[column]]
    footnote = f"{table.footnote} {FOOTNOTE}".strip()
    return replace(table, frame=csv_frame), replace(table, frame=shown, footnote=footnote)
