"""Group fairness (Song et al. 2025, arXiv:2503.07806): arXiv disciplines as groups, one reward per
(title -> abstract) pair, one-way ANOVA, post-hoc pairs, gaps and cross-model correlations.

`arxiv/` gets the papers (stage 1), `stats/` computes the statistics and tables, `figures/` draws them,
`summary` and `reproduction` put them in words and beside the published numbers. Scoring goes through the
shared engine (rmeval.scoring). Import-free: the catalogue is read at Snakefile parse time.
"""
