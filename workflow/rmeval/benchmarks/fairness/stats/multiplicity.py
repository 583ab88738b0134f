"""Benjamini-Hochberg q-values over a table's models (the false discovery rate, Benjamini & Hochberg 1995): the
shared `rmeval.multiplicity.bh_q_values` (statsmodels multipletests(method="fdr_bh"))."""

from __future__ import annotations

from rmeval.multiplicity import bh_q_values

__all__ = ["bh_q_values"]
