"""Trivial baselines as models (adapter `baseline`): a reward computed from the row's text by a fixed rule, with no
weights, no tokenizer, no GPU and no torch. Configured in `models:` like any model and scored by the same engine,
so every benchmark's tables show what such a rule scores on the same items as the real models:

- `length`: the number of characters of the response (`len(response)`, Unicode code points). On RewardBench it
  prefers the longer completion (allenai/reward-bench issue 267: 100 % on alpacaeval-easy and -hard); on the fairness
  groups it shows how large a group gap abstract length alone produces.
- `random`: uniform on [0, 1), a function of the seed and the row's prompt and response only (BLAKE2b of the three),
  never of its batch, position or order: copies of one text get one reward, another seed other rewards.
- `constant`: `value` for every row (every comparison a tie).

A baseline has no tokenizer: a row's `n_tokens` is the characters of its prompt and response (the length a length
analysis reads), nothing is truncated. Its sidecar's `revision` is the rule itself (`baseline:random:seed=0`), which
the lock records in place of a commit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Prepared, RewardScorer, Runtime
from rmeval.models.catalogue import ADAPTERS, BASELINE

if TYPE_CHECKING:
    import numpy as np

    from rmeval.registry import ModelSpec
    from rmeval.tasks import Pairs

REVISION_PREFIX = f"{BASELINE}:"  # a baseline's revision in its sidecars and the lock
_RANDOM_DOMAIN = b"rmeval-baseline-random\0"
_WORDS = {"length": "reward = the number of characters of the response",
          "random": "reward = a seeded uniform random number per (prompt, response)",
          "constant": "reward = one constant for every row"}


@dataclass(frozen=True)
class BaselineRule:
    """One baseline: its kind and the option that kind reads (the catalogue's defaults filled in)."""

    kind: str
    seed: int = 0
    value: float = 0.0

    @classmethod
    def from_options(cls, options: dict[str, Any], where: str) -> BaselineRule:
        entry = ADAPTERS[BASELINE]
        problems = entry.option_problems(options)
        if problems:
            raise RmevalError(f"{where}: " + "; ".join(problems))
        settings = entry.settings(options)
        return cls(kind=str(settings["kind"]), seed=int(settings["seed"]), value=float(settings["value"]))

    @property
    def revision(self) -> str:
        """What identifies the rule, in place of a commit: `baseline:length`, `baseline:random:seed=0`,
        `baseline:constant:value=0.0`."""
        detail = {"random": f":seed={self.seed}", "constant": f":value={self.value!r}"}.get(self.kind, "")
        return f"{REVISION_PREFIX}{self.kind}{detail}"

    @property
    def label(self) -> str:
        """Its name in a table's mode or kind column: `length baseline`."""
        return f"{self.kind} baseline"

    @property
    def words(self) -> str:
        """What it does, for notes and summaries."""
        detail = {"random": f" (seed {self.seed})", "constant": f" ({self.value:g})"}.get(self.kind, "")
        return _WORDS[self.kind] + detail

    def details(self) -> dict[str, Any]:
        """The sidecar's `adapter_details` (read back by `from_sidecar`)."""
        return {"baseline": self.kind, **({"seed": self.seed} if self.kind == "random" else {}),
                **({"value": self.value} if self.kind == "constant" else {})}

    def rewards(self, prompts: list[str], responses: list[str]) -> np.ndarray:
        import numpy as np

        if self.kind == "length":
            return np.array([float(len(response)) for response in responses], dtype=np.float64)
        if self.kind == "constant":
            return np.full(len(responses), self.value, dtype=np.float64)
        return np.array([random_reward(self.seed, prompt, response)
                         for prompt, response in zip(prompts, responses, strict=True)], dtype=np.float64)


def _field(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(8, "little") + data  # length-prefixed: ("ab", "c") and ("a", "bc") differ


def random_reward(seed: int, prompt: str, response: str) -> float:
    """Uniform on [0, 1): the top 53 bits of BLAKE2b(seed, prompt, response), a function of nothing else."""
    message = _RANDOM_DOMAIN + _field(str(seed)) + _field(prompt) + _field(response)
    bits = int.from_bytes(hashlib.blake2b(message, digest_size=8).digest(), "little") >> 11
    return bits / float(1 << 53)


def row_keys(prompts: list[str], responses: list[str]) -> np.ndarray:
    """One 16-byte digest per row of what a baseline reads (rmeval.scoring.distinct: copies are scored once)."""
    import numpy as np

    keys = np.empty(len(prompts), dtype="S16")
    for index, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
        keys[index] = hashlib.blake2b(_field(prompt) + _field(response), digest_size=16).digest()
    return keys


class BaselineScorer(RewardScorer):
    """The `baseline` adapter: rewards from the rule, one batch unit per row."""

    budget_unit = "rows"

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        self.spec = spec
        self.rule = BaselineRule.from_options(spec.options, f"model {spec.name!r}")
        self.pairs: Pairs | None = None

    def prepare(self, pairs: Pairs) -> Prepared:
        import numpy as np

        self.pairs = pairs
        chars = np.array([len(p) + len(r) for p, r in zip(pairs.prompts, pairs.responses, strict=True)],
                         dtype=np.int64)
        return Prepared(costs=np.ones(len(pairs), dtype=np.int64), n_tokens=chars,
                        truncated=np.zeros(len(pairs), dtype=bool), keys=row_keys(pairs.prompts, pairs.responses))

    def score(self, indices: np.ndarray) -> BatchScores:
        assert self.pairs is not None, "prepare() first"
        rows = [int(index) for index in indices]
        return BatchScores(rewards=self.rule.rewards([self.pairs.prompts[i] for i in rows],
                                                     [self.pairs.responses[i] for i in rows]))

    def describe(self) -> dict[str, Any]:
        return {"revision": self.rule.revision, "dtype": "n/a", "device": "cpu", **self.rule.details()}


def from_sidecar(meta: dict[str, Any]) -> BaselineRule | None:
    """The baseline a score sidecar (`.meta.json`) was written by, or None when a model wrote it."""
    from rmeval.models.catalogue import is_baseline

    if not is_baseline(meta):
        return None
    details = meta.get("adapter_details") or {}
    options = {key: details[key] for key in ("seed", "value") if key in details}
    return BaselineRule.from_options({"kind": details.get("baseline"), **options}, "score sidecar")


def scored_baselines(scores_dir: Path, models: list[str]) -> dict[str, BaselineRule]:
    """model -> its rule, for the models of `scores_dir/{model}/` whose score sidecars say a baseline wrote them
    (a folder without sidecars, e.g. scores copied by hand, is a model's)."""
    from rmeval.scoring.sidecar import model_sidecar

    found: dict[str, BaselineRule] = {}
    for model in models:
        record = model_sidecar(Path(scores_dir) / model)
        rule = from_sidecar(record) if record is not None else None
        if rule is not None:
            found[model] = rule
    return found


def sidecar_baseline(score_file: Path) -> BaselineRule | None:
    """The baseline that wrote one score file (its `<stem>.meta.json` beside it), or None."""
    from rmeval.scoring.sidecar import sidecar_of

    record = sidecar_of(score_file)
    return from_sidecar(record) if record is not None else None
