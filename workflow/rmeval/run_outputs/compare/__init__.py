"""Which model is better, and is the difference real (issue 40): `rmeval compare` and its outputs.

Every benchmark that declares a comparison (`Benchmark.compare`, rmeval.benchmarks.catalogue.ModelComparison)
gives, from its own score folder, its metrics, each model's value with its interval and the paired comparison of
two models on the items both scored (`parts`). This package gathers them, names no benchmark: `plan` (what the
rule passes, parse time), `command` (`rmeval compare`: comparisons.csv with Holm and BH adjustment within each
benchmark, leaderboard.csv with simultaneous rank intervals), `tables` (their CSV / Markdown / LaTeX), `figure`
(ranks with their intervals) and `summary` (the summary's "Which model is better").
"""
