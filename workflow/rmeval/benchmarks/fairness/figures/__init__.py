"""Fairness figures (matplotlib, Agg backend): Figures 2-3 of Song et al. 2025 and the extra figures.

Every module here reads the CSV tables written by `rmeval fairness-stats`; none imports torch.
"""
