"""The models the fairness tables mark, known from their score sidecars (`{group}.meta.json`'s adapter):

- LLM judges: rmeval can score the fairness rows with a `direct` judge (a 1-10 rating of each abstract for its
  title), which Song et al. (2025) did not: their protocol excluded judges.
- Trivial baselines (adapter `baseline`, `rmeval.models.catalogue.is_baseline`): a rule on the text, not a reward
  model; the length baseline's gap is what response length alone produces on these groups.

Every table that names such a model says so: in Markdown and LaTeX the model's name carries a suffix
(`JUDGE_SUFFIX`, `BASELINE_SUFFIX`) and the footnote explains it; in CSV (kept machine-readable, names unchanged) the
`note` column of its rows says it, after any note the row had."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rmeval.benchmarks.fairness.stats.tables import Table
from rmeval.models.catalogue import ADAPTERS
from rmeval.scoring.sidecar import model_sidecar

if TYPE_CHECKING:
    from rmeval.models.baseline import BaselineRule

JUDGE_SUFFIX = " (LLM judge†)"
JUDGE_NOTE = "LLM judge (1-10 rating); not part of Song et al.'s protocol"
FOOTNOTE = ("† An LLM judge rating each abstract for its title from 1 to 10: not part of Song et al. (2025)'s "
            "protocol, which excluded judges.")
BASELINE_SUFFIX = " (baseline‡)"
MODEL_COLUMNS = ("model", "model_a", "model_b", "reference_model")


def judge_models(scores_dir: Path, models: list[str]) -> set[str]:
    """The models whose score sidecars name an LLM-judge adapter (rmeval.models.catalogue)."""
    found = set()
    for model in models:
        record = model_sidecar(scores_dir / model) or {}
        entry = ADAPTERS.get(record.get("adapter"))
        if entry is not None and entry.judge:  # the adapter catalogue says which adapters are LLM judges
            found.add(model)
    return found


BASELINE_NOTE = "trivial baseline, not a reward model"


def baseline_note(rule: BaselineRule) -> str:
    """A baseline row's CSV note."""
    return f"{BASELINE_NOTE}: {rule.words}"


def without_baseline_note(note: object) -> str:
    """A CSV note without the baseline mark `labelled` added: what the row's statistics themselves say."""
    parts = [part for part in (note if isinstance(note, str) else "").split("; ")
             if part and not part.startswith(BASELINE_NOTE)]
    return "; ".join(parts)


def baseline_footnote(baselines: Mapping[str, BaselineRule]) -> str:
    rules = "; ".join(f"{model}: {rule.words}" for model, rule in baselines.items())
    return (f"‡ A trivial baseline, not a reward model (rmeval's `baseline` adapter; {rules}): its row shows what "
            "that rule alone gives on these groups.")


def _joined(note: object, mark: str) -> str:
    text = note if isinstance(note, str) else ""
    return f"{text}; {mark}" if text.strip() else mark


def labelled(table: Table, judges: set[str], baselines: Mapping[str, BaselineRule] | None = None,
             ) -> tuple[Table, Table]:
    """(the CSV's table, the Markdown / LaTeX table), labelled when the table names a judge or a baseline."""
    baselines = baselines or {}
    columns = [c for c in MODEL_COLUMNS if c in table.frame.columns]
    marked = judges | set(baselines)
    if not marked or not any(table.frame[c].isin(marked).any() for c in columns):
        return table, table
    csv_frame = table.frame.copy()
    notes = list(csv_frame["note"]) if "note" in csv_frame.columns else [""] * len(csv_frame)
    for index, row in enumerate(table.frame[columns].itertuples(index=False)):
        named_baselines = dict.fromkeys(name for name in row if name in baselines)  # once each, in column order
        for mark in ([JUDGE_NOTE] if set(row) & judges else []) + [baseline_note(baselines[name])
                                                                   for name in named_baselines]:
            notes[index] = _joined(notes[index], mark)
    csv_frame["note"] = [note if isinstance(note, str) else "" for note in notes]
    shown = table.frame.copy()
    for column in columns:
        shown[column] = [f"{v}{JUDGE_SUFFIX}" if v in judges else f"{v}{BASELINE_SUFFIX}" if v in baselines else v
                         for v in shown[column]]
    named = set(table.frame[columns].to_numpy().ravel())
    footnotes = ([FOOTNOTE] if named & judges else []) + (
        [baseline_footnote({m: r for m, r in baselines.items() if m in named})] if named & set(baselines) else [])
    footnote = " ".join([table.footnote, *footnotes]).strip()
    return replace(table, frame=csv_frame), replace(table, frame=shown, footnote=footnote)



@dataclass(frozen=True)
class Marks:
    """The judges and baselines among a run's models, and every fairness table written with them marked."""

    judges: frozenset[str] = frozenset()
    baselines: Mapping[str, BaselineRule] = field(default_factory=dict)

    @classmethod
    def of(cls, scores_dir: Path, models: list[str]) -> Marks:
        """From the models' score sidecars under `scores_dir/{model}/`."""
        from rmeval.models.baseline import scored_baselines

        return cls(frozenset(judge_models(Path(scores_dir), models)), scored_baselines(Path(scores_dir), models))

    def write(self, table: Table, out: Path, formats: tuple[str, ...] = ("csv", "md", "tex")) -> list[Path]:
        """The table's files: the CSV with marked notes, Markdown and LaTeX with marked names and the footnote."""
        from rmeval.benchmarks.fairness.stats.tables import write_table

        for_csv, for_humans = labelled(table, set(self.judges), self.baselines)
        shown = tuple(fmt for fmt in formats if fmt != "csv")
        return ([*write_table(for_csv, out, formats=("csv",))] if "csv" in formats else []) + (
            write_table(for_humans, out, formats=shown) if shown else [])
