"""Score all rows of one input with one adapter.

The loop: plan length-sorted batches to a token budget, score them longest first, check every
reward is finite, checkpoint every N rows, and on CUDA out-of-memory halve the budget and re-plan
the failed batch. Rows are returned in input order whatever the batch order was. Rows that carry one
model input (`Prepared.keys`) are scored once and share its outputs (rmeval.scoring.distinct).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.base import Prepared, RewardScorer
from rmeval.scoring.batching import plan_batches
from rmeval.scoring.checkpoint import Checkpoint
from rmeval.scoring.distinct import Distinct, distinct_rows
from rmeval.scoring.progress import Progress
from rmeval.tasks import Pairs

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class EngineSettings:
    """The job's resolved values (rmeval.scoring.job), so no defaults here (those: rmeval.scoring.settings)."""

    token_budget: int  # padded tokens per batch (requests per batch for API adapters)
    max_batch_rows: int
    checkpoint_every: int  # rows between checkpoints; 0 disables them
    progress_every_s: float | None = None


@dataclass
class EngineReport:
    """What happened, for the metadata sidecar."""

    token_budget: int
    token_budget_final: int
    oom_backoffs: int = 0
    resumed_rows: int = 0
    distinct_rows: int = 0  # distinct model inputs among the rows (each scored once)
    scored_rows: int = 0
    scored_tokens: int = 0
    batches: int = 0
    score_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Results:
    rewards: np.ndarray
    n_tokens: np.ndarray
    truncated: np.ndarray
    done: np.ndarray
    step_rewards: list[list[float] | None] | None
    extra: dict[str, list[Any]] = field(default_factory=dict)

    def frame(self, ids: list[str], rows: np.ndarray | None = None, with_index: bool = False) -> pd.DataFrame:
        import pandas as pd

        rows = np.arange(len(ids)) if rows is None else np.asarray(rows)
        columns: dict[str, Any] = {}
        if with_index:
            columns["index"] = rows.astype(np.int64)
        columns["id"] = [ids[i] for i in rows]
        columns["reward"] = self.rewards[rows].astype(np.float64)
        columns["n_tokens"] = self.n_tokens[rows].astype(np.int64)
        columns["truncated"] = self.truncated[rows].astype(bool)
        if self.step_rewards is not None:
            columns["step_rewards"] = [list(self.step_rewards[i] or []) for i in rows]
        for name, values in self.extra.items():
            columns[name] = [values[i] for i in rows]
        return pd.DataFrame(columns)

    def share(self, distinct: Distinct) -> None:
        """Give every copy its first row's outputs."""
        copies = distinct.copies
        if not len(copies):
            return
        sources = distinct.first[copies]
        self.rewards[copies] = self.rewards[sources]
        self.n_tokens[copies] = self.n_tokens[sources]
        self.truncated[copies] = self.truncated[sources]
        if self.step_rewards is not None:
            for row, source in zip(copies.tolist(), sources.tolist(), strict=True):
                steps = self.step_rewards[source]
                self.step_rewards[row] = None if steps is None else list(steps)
        for values in self.extra.values():
            for row, source in zip(copies.tolist(), sources.tolist(), strict=True):
                values[row] = values[source]
        self.done[copies] = self.done[sources]


def _restore(results: _Results, finished: pd.DataFrame, pairs: Pairs) -> int:
    rows = finished["index"].to_numpy(dtype=np.int64)
    if len(rows) and (rows.max() >= len(pairs) or (finished["id"].astype(str).to_numpy() != np.array(pairs.ids)[rows]).any()):
        return -1  # the checkpoint does not belong to this input after all
    results.rewards[rows] = finished["reward"].to_numpy(dtype=np.float64)
    results.n_tokens[rows] = finished["n_tokens"].to_numpy(dtype=np.int64)
    results.truncated[rows] = finished["truncated"].to_numpy(dtype=bool)
    results.done[rows] = True
    if results.step_rewards is not None and "step_rewards" in finished.columns:
        for row, steps in zip(rows, finished["step_rewards"], strict=True):
            results.step_rewards[row] = [float(s) for s in steps]
    for name, values in results.extra.items():
        if name not in finished.columns:
            return -1  # a checkpoint of an older layout: start over
        for row, value in zip(rows, finished[name].tolist(), strict=True):
            values[row] = _plain(value)
    return len(rows)


def _plain(value: Any) -> Any:
    """A checkpointed cell back as a plain Python value (parquet gives numpy arrays and NaN for None)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and value != value:
        return None
    return value


def _check_finite(rewards: np.ndarray, batch: np.ndarray, pairs: Pairs, model_name: str) -> None:
    bad = ~np.isfinite(rewards)
    if bad.any():
        first = int(batch[np.flatnonzero(bad)[0]])
        raise RmevalError(
            f"model {model_name!r} returned a non-finite reward ({rewards[bad][0]}) for row id={pairs.ids[first]!r}"
            f" ({int(bad.sum())} such row(s) in this batch); no scores were written"
        )


def score_rows(
    scorer: RewardScorer,
    pairs: Pairs,
    prepared: Prepared,
    settings: EngineSettings,
    checkpoint: Checkpoint | None,
    model_name: str,
) -> tuple[pd.DataFrame, EngineReport]:
    """Score every row; returns the output table (input order) and a report."""
    import time

    count = len(pairs)
    results = _Results(
        rewards=np.full(count, np.nan),
        n_tokens=prepared.n_tokens.astype(np.int64).copy(),
        truncated=prepared.truncated.astype(bool).copy(),
        done=np.zeros(count, dtype=bool),
        step_rewards=[None] * count if scorer.has_steps else None,
        extra={name: [None] * count for name in scorer.extra_columns},
    )
    report = EngineReport(token_budget=settings.token_budget, token_budget_final=settings.token_budget)
    if checkpoint is not None:
        finished = checkpoint.load()
        if finished is not None:
            restored = _restore(results, finished, pairs)
            if restored < 0:
                checkpoint.clear()
                results.done[:] = False
            else:
                report.resumed_rows = restored
        checkpoint.start()

    distinct = distinct_rows(prepared.keys, count)
    report.distinct_rows = distinct.count
    firsts = distinct.representatives
    costs = prepared.costs.astype(np.float64)
    progress = Progress(f"score {model_name}", len(firsts), done_rows=int(results.done[firsts].sum()),
                        every_s=settings.progress_every_s, total_work=float(costs[firsts].sum()),
                        done_work=float(costs[firsts][results.done[firsts]].sum()))
    if report.resumed_rows:
        progress.message(f"resuming from checkpoint: {report.resumed_rows}/{count} rows already scored")
    if distinct.count < count:
        progress.message(f"{count} rows carry {distinct.count} distinct inputs: each is scored once")
    budget = settings.token_budget
    queue = deque(plan_batches(prepared.costs, firsts[~results.done[firsts]], budget, settings.max_batch_rows))
    unsaved: list[np.ndarray] = []
    unsaved_rows = 0
    started = time.monotonic()
    try:
        while queue:
            batch = queue.popleft()
            try:
                scores = scorer.score(batch)
            except Exception as error:  # noqa: BLE001 - only OOM is handled; the rest re-raises
                if not scorer.is_out_of_memory(error):
                    raise
                scorer.after_out_of_memory()
                if len(batch) == 1:
                    raise RmevalError(
                        f"model {model_name!r}: out of memory on a single row id={pairs.ids[int(batch[0])]!r} "
                        f"({int(prepared.costs[batch[0]])} tokens); lower max_length or give the model more GPUs"
                    ) from error
                budget = max(1, min(budget, int(prepared.costs[batch].max()) * len(batch)) // 2)
                report.oom_backoffs += 1
                report.token_budget_final = budget
                progress.message(f"out of memory on a batch of {len(batch)} rows: token budget halved to {budget}")
                queue.extendleft(reversed(plan_batches(prepared.costs, batch, budget, settings.max_batch_rows)))
                continue
            _check_finite(scores.rewards, batch, pairs, model_name)
            results.rewards[batch] = scores.rewards
            if scores.n_tokens is not None:
                results.n_tokens[batch] = scores.n_tokens
            if results.step_rewards is not None and scores.step_rewards is not None:
                for row, steps in zip(batch, scores.step_rewards, strict=True):
                    results.step_rewards[int(row)] = steps
            for name, values in results.extra.items():
                given = (scores.extra or {}).get(name)
                if given is None or len(given) != len(batch):
                    raise AssertionError(f"adapter gave no {name!r} column for its batch")
                for row, value in zip(batch, given, strict=True):
                    values[int(row)] = value
            results.done[batch] = True
            tokens = int(results.n_tokens[batch].sum())
            report.batches += 1
            report.scored_rows += len(batch)
            report.scored_tokens += tokens
            progress.update(len(batch), tokens, note=f"budget {budget}", work=float(costs[batch].sum()))
            if checkpoint is not None and settings.checkpoint_every > 0:
                unsaved.append(batch)
                unsaved_rows += len(batch)
                if unsaved_rows >= settings.checkpoint_every:
                    checkpoint.append(results.frame(pairs.ids, np.concatenate(unsaved), with_index=True))
                    unsaved, unsaved_rows = [], 0
    except RmevalError as error:
        if checkpoint is not None:
            if getattr(error, "keeps_checkpoint", False):
                # The model server died or hung: not this job's data. Keep what is scored for the rerun.
                if unsaved:
                    checkpoint.append(results.frame(pairs.ids, np.concatenate(unsaved), with_index=True))
            else:
                checkpoint.clear()  # a deterministic failure (NaN, no fit): resuming would only repeat it
        raise
    report.score_s = time.monotonic() - started
    results.share(distinct)
    if not results.done.all():
        raise AssertionError("engine finished with unscored rows")
    return results.frame(pairs.ids), report
