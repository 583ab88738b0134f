"""Adjusted p-values over a family of tests: Holm's step-down (family-wise error, Holm 1979) and Benjamini-Hochberg
q-values (false discovery rate, Benjamini & Hochberg 1995), each equal to statsmodels `multipletests` (method
"holm" / "fdr_bh"). NaN stays NaN and counts no test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _finite_order(p_values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p_values, dtype=np.float64)
    finite = np.flatnonzero(~np.isnan(p))
    return p, finite[np.argsort(p[finite], kind="stable")]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values: the running maximum of (m - i) p_(i), capped at 1."""
    p, order = _finite_order(p_values)
    adjusted = np.full(p.shape, np.nan)
    m = order.size
    if m:
        scaled = p[order] * (m - np.arange(m))
        adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted.tolist()


def bh_q_values(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg q-values: the running minimum from the top of p_(i) m / i, capped at 1."""
    p, order = _finite_order(p_values)
    q = np.full(p.shape, np.nan)
    m = order.size
    if m:
        scaled = p[order] * m / np.arange(1, m + 1)
        q[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return q.tolist()
