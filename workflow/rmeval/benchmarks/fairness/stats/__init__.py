"""Group-fairness statistics (Song et al. 2025 and extensions) and their table writers.

Nothing here imports torch: these modules run in the lightweight statistics jobs.
"""
