"""Length-controlled analysis: ANCOVA reward ~ group + log(n_tokens).

Reward models are known to prefer longer inputs, and abstract length differs by
discipline; this separates the group effect from the length effect. Adjusted group
means are the estimated marginal means at the overall mean log length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmeval.errors import RmevalError


@dataclass(frozen=True)
class LengthResult:
    group_f: float  # F for group, given log length (Type II)
    group_p: float
    length_coef: float  # reward change per unit log(n_tokens), within groups
    length_p: float
    raw_means: tuple[float, ...]
    adjusted_means: tuple[float, ...]
    raw_gap: float
    adjusted_gap: float
    gap_retained_percent: float


def _rss(design: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ beta
    return beta, float(residual @ residual)


def ancova(model: str, rewards: np.ndarray, labels: np.ndarray, n_tokens: np.ndarray, k: int) -> LengthResult:
    from scipy import stats

    log_length = np.log(n_tokens)
    if np.ptp(rewards) == 0.0:
        raise RmevalError(f"model {model}: every reward is equal; there is no length effect to estimate")
    if np.ptp(log_length) == 0.0:
        raise RmevalError(f"model {model}: every input has the same n_tokens; the length effect is not identifiable")
    n = rewards.size
    dummies = (labels[:, None] == np.arange(1, k)[None, :]).astype(np.float64)  # group 0 is the baseline
    ones = np.ones((n, 1))
    full = np.hstack([ones, dummies, log_length[:, None]])
    if np.linalg.matrix_rank(full) < full.shape[1]:
        raise RmevalError(
            f"model {model}: log(n_tokens) is constant within every group (collinear with group), "
            "so length and group effects cannot be separated"
        )
    beta, rss_full = _rss(full, rewards)
    _, rss_no_group = _rss(np.hstack([ones, log_length[:, None]]), rewards)
    _, rss_no_length = _rss(np.hstack([ones, dummies]), rewards)
    df_residual = n - full.shape[1]
    mse = rss_full / df_residual if df_residual > 0 else 0.0
    if mse <= 0.0:
        raise RmevalError(f"model {model}: group and length fit the rewards exactly (no residual variance)")
    group_f = ((rss_no_group - rss_full) / (k - 1)) / mse
    group_p = float(stats.f.sf(group_f, k - 1, df_residual))
    length_f = (rss_no_length - rss_full) / mse
    length_p = float(stats.f.sf(length_f, 1, df_residual))
    slope = float(beta[-1])
    raw_means = np.array([rewards[labels == g].mean() for g in range(k)])
    group_log_means = np.array([log_length[labels == g].mean() for g in range(k)])
    adjusted = raw_means - slope * (group_log_means - log_length.mean())
    raw_gap = float(np.ptp(raw_means))
    adjusted_gap = float(np.ptp(adjusted))
    return LengthResult(
        group_f=float(group_f),
        group_p=group_p,
        length_coef=slope,
        length_p=length_p,
        raw_means=tuple(float(v) for v in raw_means),
        adjusted_means=tuple(float(v) for v in adjusted),
        raw_gap=raw_gap,
        adjusted_gap=adjusted_gap,
        gap_retained_percent=adjusted_gap / raw_gap * 100.0 if raw_gap > 0.0 else float("nan"),
    )
