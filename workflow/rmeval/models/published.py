"""Published per-item results as a model (adapter `published`): the authors' results file of a model they ran, or an
earlier rmeval run's score files, read instead of running the model (rmeval.published). No weights, no tokenizer,
no GPU, no torch.

`prepare` reads the file (the benchmark's reader, its catalogue's `published_reader`; or the earlier run's score
file), aligns its items with this job's rows by the benchmark's own id (rmeval.published.align: fewer than 90 %
matched stops the job, naming both sides' data) and `finish_output` leaves out the rows of unmatched items, so the
score file holds the matched items only; the sidecar counts and names what is missing on either side. A row's
`n_tokens` counts the characters of its prompt and response, as a baseline's (there is no tokenizer).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Prepared, RewardScorer, Runtime
from rmeval.published.entry import REVISION_PREFIX, PublishedEntry

if TYPE_CHECKING:
    import numpy as np

    from rmeval.registry import ModelSpec
    from rmeval.tasks import Pairs


class PublishedScorer(RewardScorer):
    budget_unit = "rows"

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        self.spec = spec
        self.runtime = runtime
        self.entry = PublishedEntry.from_spec(spec)
        self.rewards: np.ndarray | None = None
        self.kept: set[str] = set()
        self.details: dict[str, Any] = {}

    def prepare(self, pairs: Pairs) -> Prepared:
        import numpy as np

        from rmeval.published.align import align, check, file_words, group_rows
        from rmeval.published.reader import reader_for

        file = self.entry.fetch()
        if self.entry.source == "run":
            from rmeval.published.earlier import data_words, read_earlier

            earlier = read_earlier(file, str(self.entry.model), pairs)
            scores, benchmark, notes = earlier.scores, earlier.benchmark, list(earlier.notes)
            file, what = earlier.path, f"the earlier run's score file {earlier.path}"
            their_data = data_words(earlier.record)
            item_of = _item_of(benchmark)
        else:
            reader = reader_for(str(self.entry.benchmark))
            scores, benchmark, notes = reader.read(file), reader.benchmark, []
            what, their_data = f"{reader.fmt} {file}", file_words(self.entry.origin, scores.coverage,
                                                                  self.spec.description)
            item_of = reader.item_of
        digest = self.entry.check_file(file, scores.model)
        table = self.runtime.extra.get("input")
        if self.entry.source != "run" and reader.job_rows is not None and table:  # rows shared by items (texts)
            scores, run_items = reader.job_rows(scores, Path(table))
        else:
            run_items = group_rows(pairs.ids, item_of)
        alignment = align(run_items, scores.items)
        check(alignment, self.spec.name, what, self._data_words(benchmark, alignment.run_items), their_data)
        self.kept = {row for item in alignment.matched for row in scores.items[item]}
        self.rewards = np.array([scores.rewards[row] if row in self.kept else 0.0 for row in pairs.ids],
                                dtype=np.float64)
        resolved = self.entry.resolved(file)
        self.details = {"published": {
            "source": self.entry.source, "origin": self.entry.origin, "model": scores.model or self.entry.model,
            "benchmark": benchmark, "file": str(file), **({"resolved_revision": resolved} if resolved else {}),
            "alignment": alignment.record(), "alignment_words": alignment.words(), "notes": notes,
            **({"leaderboard": self.entry.leaderboard, "leaderboard_source": self.entry.leaderboard_source}
               if self.entry.leaderboard is not None else {}),
            **dict(scores.details)}, "published_sha256": digest,
            **({"earlier_run_model": earlier_model} if (earlier_model := _earlier_model(scores.details)) else {})}
        chars = np.array([len(p) + len(r) for p, r in zip(pairs.prompts, pairs.responses, strict=True)],
                         dtype=np.int64)
        return Prepared(costs=np.ones(len(pairs), dtype=np.int64), n_tokens=chars,
                        truncated=np.zeros(len(pairs), dtype=bool))

    def _data_words(self, benchmark: str, items: int) -> str:
        """This run's data, in words: what the benchmark's reader says of the job's input table, else its count."""
        from rmeval.published.reader import reader_for

        table = self.runtime.extra.get("input")
        try:
            words = reader_for(benchmark).input_words
        except RmevalError:
            words = None
        return (f"{words(Path(table))}, {items} items" if words and table
                else f"this run's {benchmark} items ({items})")

    def score(self, indices: np.ndarray) -> BatchScores:
        assert self.rewards is not None, "prepare() first"
        return BatchScores(rewards=self.rewards[indices])

    def finish_output(self, table: Any) -> Any:
        return table[table["id"].astype(str).isin(self.kept)].reset_index(drop=True)

    def describe(self) -> dict[str, Any]:
        return {"revision": revision(self.entry), "dtype": "n/a", "device": "cpu", **self.details}


def revision(entry: PublishedEntry) -> str:
    """What identifies the file, in place of a commit: `published:github:owner/name@<commit>:path`, ... (the lock's
    `published_sha256` pins its bytes)."""
    return f"{REVISION_PREFIX}{entry.origin}"


def _earlier_model(details: Any) -> dict[str, Any] | None:
    """An earlier run's record of the model (its lock's `models` entry), for this run's lock."""
    record = (details or {}).get("earlier_run") or {}
    return record.get("model_lock") or None


def _item_of(benchmark: str) -> Any:
    from rmeval.published.reader import reader_for

    try:
        return reader_for(benchmark).item_of
    except RmevalError:
        return lambda row_id: row_id


def sidecar_published(score_file: Path) -> dict[str, Any] | None:
    """The `published` record of a score file's sidecar (source, origin, model, alignment, notes), or None when a
    model run here wrote it."""
    from rmeval.scoring.sidecar import sidecar_of

    record = sidecar_of(score_file)
    if not record or record.get("adapter") != "published":
        return None
    details = record.get("adapter_details") or {}
    return {**(details.get("published") or {}), "revision": record.get("revision"),
            "sha256": details.get("published_sha256")}
