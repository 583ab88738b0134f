"""The official RM-Bench scoring (THU-KEG/RM-Bench `scripts/utils.py` compute_accuracy, lines 48-112), written from
its definition:

- per prompt a 3 x 3 matrix over (chosen style i, rejected style j); a cell is won when chosen > rejected, strictly
  (a tie is a loss); a domain's matrix is the mean over its prompts;
- hard = the mean of the upper-right triangle (a plainer chosen against a fancier rejected), normal = the
  diagonal, easy = the lower-left triangle; a domain's score is the mean of the three;
- overall (total_dataset.json): each of hard, normal, easy averaged over the four domains, and the average of the
  four domain scores (equal to the mean of the three difficulties).
The numpy operations are the official ones in the official order, so the numbers agree to the last bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rmeval.benchmarks.rmbench.official import DOMAINS

SIZE = 3
TRIANGLE = SIZE * (SIZE - 1) / 2  # cells above (or below) the diagonal


def wins(chosen: np.ndarray, rejected: np.ndarray) -> np.ndarray:
    """Per prompt its 3 x 3 matrix of won cells (1.0 where chosen[i] > rejected[j]): (n, 3) x (n, 3) -> (n, 3, 3)."""
    return (chosen[:, :, None] > rejected[:, None, :]).astype(float)


@dataclass(frozen=True)
class DomainScore:
    hard: float
    normal: float
    easy: float

    @property
    def average(self) -> float:
        return float(np.mean([self.hard, self.normal, self.easy]))  # utils.py line 60, its dict order

    def get(self, difficulty: str) -> float:
        return {"hard": self.hard, "normal": self.normal, "easy": self.easy, "average": self.average}[difficulty]


def domain_score(matrices: np.ndarray) -> DomainScore:
    """A domain's hard / normal / easy from its prompts' won-cell matrices (n, 3, 3)."""
    accuracy = matrices.sum(axis=0) / len(matrices)  # whole counts, exact; as `acc_matrix /= len(results)`
    return DomainScore(hard=float(np.sum(np.triu(accuracy, 1)) / TRIANGLE), normal=float(np.mean(np.diag(accuracy))),
                       easy=float(np.sum(np.tril(accuracy, -1)) / TRIANGLE))


@dataclass(frozen=True)
class Overall:
    hard: float
    normal: float
    easy: float
    average: float

    def get(self, difficulty: str) -> float:
        return {"hard": self.hard, "normal": self.normal, "easy": self.easy, "average": self.average}[difficulty]


def overall(domains: Mapping[str, DomainScore]) -> Overall:
    """The four domains' means (utils.py lines 61-66), in the official domain order."""
    ordered = [domains[domain] for domain in DOMAINS]
    return Overall(hard=float(np.mean([d.hard for d in ordered])), normal=float(np.mean([d.normal for d in ordered])),
                   easy=float(np.mean([d.easy for d in ordered])),
                   average=float(np.mean([d.average for d in ordered])))


def item_shares(matrices: np.ndarray) -> dict[str, np.ndarray]:
    """Per prompt the share of cells won: of the hard (upper-right), normal (diagonal), easy (lower-left) cells and
    of all nine (`average`; a domain's average is their mean over its prompts)."""
    upper = np.triu_indices(SIZE, 1)
    lower = np.tril_indices(SIZE, -1)
    return {"hard": matrices[:, upper[0], upper[1]].mean(axis=1),
            "normal": np.diagonal(matrices, axis1=1, axis2=2).mean(axis=1),
            "easy": matrices[:, lower[0], lower[1]].mean(axis=1),
            "average": matrices.reshape(len(matrices), -1).mean(axis=1)}
