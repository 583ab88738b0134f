"""What every adapter gives the scoring engine.

An adapter turns all rows of an input into per-row costs once (`prepare`), then scores any
subset of rows by index (`score`). The engine owns batching, checkpoints, OOM back-off and
output; the adapter owns tokenisation, padding and how a model's output becomes a scalar.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from rmeval.tasks import Pairs


@dataclass(frozen=True)
class Prepared:
    """Per-row facts known before scoring (arrays aligned with the input rows)."""

    costs: np.ndarray  # int64: batch-budget units per row (tokens for local models, 1 per API request)
    n_tokens: np.ndarray  # int64: tokens the model sees for the row (after truncation)
    truncated: np.ndarray  # bool
    # Per row, a digest of exactly what the model sees (S16); rows with one key get one reward (the engine scores
    # the first and copies it). None: every row is its own (API adapters: a request is not a token sequence).
    keys: np.ndarray | None = None


@dataclass(frozen=True)
class BatchScores:
    rewards: np.ndarray  # float64, one per requested row, in request order
    step_rewards: list[list[float]] | None = None  # PRMs only
    n_tokens: np.ndarray | None = None  # when only known after scoring (API usage)
    extra: dict[str, list[Any]] | None = None  # one list per name in the scorer's `extra_columns`


@dataclass(frozen=True)
class Runtime:
    """Where and how to run: chosen by the CLI from the spec, the machine and the flags."""

    device: str  # "cpu", "cuda", or "auto-sharded" (device_map over several GPUs)
    dtype: str  # resolved: float32 / bfloat16 / float16
    n_gpus: int = 0
    padding_side: str | None = None  # None: the adapter's own choice
    extra: dict[str, Any] = field(default_factory=dict)


class RewardScorer(ABC):
    """Base class of all adapters."""

    has_steps: bool = False  # True for PRMs: outputs carry step_rewards
    budget_unit: str = "tokens"
    # Further per-row output columns (judges: rating / verdict ...), each a list in BatchScores.extra.
    extra_columns: tuple[str, ...] = ()

    @abstractmethod
    def prepare(self, pairs: Pairs) -> Prepared: ...

    @abstractmethod
    def score(self, indices: np.ndarray) -> BatchScores: ...

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """revision actually loaded, dtype, device, padding side, ... for the metadata sidecar."""

    def is_out_of_memory(self, error: BaseException) -> bool:
        return False

    def after_out_of_memory(self) -> None:
        """Free what a failed batch left behind before the engine retries smaller."""
        return None

    def finish_output(self, table: Any) -> Any:
        """The output table as written: every row (the default), or without the rows this adapter has no score of
        (published results that lack some of the run's items: rmeval.models.published)."""
        return table

    def summarize_output(self, table: Any) -> dict[str, Any]:
        """Facts about the finished output table for the metadata sidecar (judges: null counts, agreement)."""
        return {}

    def close(self) -> None:
        """Release network pools, threads, ..."""
        return None
