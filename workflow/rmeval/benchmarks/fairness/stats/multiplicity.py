"""Benjamini-Hochberg q-values over a table's models (the false discovery rate, Benjamini & Hochberg 1995)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bh_q_values(p_values: Sequence[float]) -> list[float]:
    """BH-adjusted p-values (statsmodels multipletests(method="fdr_bh")); NaN stays NaN and counts no test."""
    p = np.asarray(p_values, dtype=np.float64)
    q = np.full(p.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    m = finite.size
    if m == 0:
        return q.tolist()
    order = finite[np.argsort(p[finite], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return q.tolist()
