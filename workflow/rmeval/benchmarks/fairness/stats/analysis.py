"""Run every fairness statistic on a loaded ScoreSet and lay the results out as tables.

Everything is computed before anything is written, so an error leaves no partial output.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rmeval.benchmarks.fairness.stats import crossmodel, gaps, length, oneway, posthoc
from rmeval.benchmarks.fairness.stats.loading import ModelScores, ScoreSet
from rmeval.benchmarks.fairness.stats.tables import Table
from rmeval.errors import RmevalError
from rmeval.tables import Column

PAPER_REFERENCE_MODEL = "Nemotron-4-340B-Reward"
PAIR_COLUMNS = ["model", "group_a", "group_b", "mean_diff", "std_error", "df", "q_statistic", "p_adj",
                "ci_low", "ci_high", "reject"]


@dataclass(frozen=True)
class StatsSettings:
    alpha: float = 0.05
    bootstrap: int = 2000
    permutations: int = 2000
    seed: int = 0
    reference_model: str | None = PAPER_REFERENCE_MODEL


@dataclass
class ModelResult:
    model: str
    summaries: list[oneway.GroupSummary]
    anova: oneway.ClassicAnova
    welch: oneway.WelchAnova
    kruskal: oneway.KruskalWallis
    tukey: list[posthoc.PairComparison]
    games_howell: list[posthoc.PairComparison]
    gap: gaps.GapResult
    length: length.LengthResult | None
    length_note: str

    @property
    def group_means(self) -> np.ndarray:
        return np.array([s.mean for s in self.summaries])


@dataclass
class Analysis:
    settings: StatsSettings
    groups: list[str]
    results: list[ModelResult]
    ranks: dict[str, int | None]
    notes: list[str] = field(default_factory=list)


def analyse_model(scores: ModelScores, settings: StatsSettings) -> ModelResult:
    groups = scores.group_names
    samples = [g.rewards for g in scores.groups]
    length_result, length_note = None, ""
    if scores.has_lengths:
        rewards, labels = scores.labelled()
        n_tokens = np.concatenate([g.n_tokens for g in scores.groups])
        try:
            length_result = length.ancova(scores.model, rewards, labels, n_tokens, len(groups))
        except RmevalError as error:  # a length problem must not hide the other statistics
            length_note = f"length analysis skipped: {error}"
    else:
        lacking = [str(g.source) for g in scores.groups if g.n_tokens is None]
        length_note = f"length analysis skipped: no n_tokens column in {', '.join(lacking[:2])}" + (
            f" and {len(lacking) - 2} more" if len(lacking) > 2 else ""
        )
    return ModelResult(
        model=scores.model,
        summaries=[oneway.describe(g, s) for g, s in zip(groups, samples, strict=True)],
        anova=oneway.classic_anova(samples),
        welch=oneway.welch_anova(samples),
        kruskal=oneway.kruskal_wallis(samples),
        tukey=posthoc.tukey_hsd(groups, samples, settings.alpha),
        games_howell=posthoc.games_howell(groups, samples, settings.alpha),
        gap=gaps.gap_analysis(scores.model, groups, samples, settings.bootstrap, settings.permutations, settings.seed),
        length=length_result,
        length_note=length_note,
    )


def resolve_reference(reference: str | None, scores: ScoreSet, known_models: set[str]) -> tuple[str | None, str]:
    """The reference model to correlate against, or None with the reason Table 4 is skipped.

    A name that is neither scored nor in the registry is a typo: error. A known model
    without scores (e.g. the API-only Nemotron in a local run) only skips Table 4.
    """
    if not reference:
        return None, "Table 4 skipped: no --reference-model given."
    if reference in scores.model_names:
        return reference, ""
    if reference in known_models or reference == PAPER_REFERENCE_MODEL:
        return None, (
            f"Table 4 skipped: reference model {reference!r} has no scores among the analysed models "
            f"({', '.join(scores.model_names)})."
        )
    raise RmevalError(
        f"--reference-model: unknown model {reference!r}; scored models: {scores.model_names}; "
        f"registry models: {sorted(known_models)}"
    )


def analyse(scores: ScoreSet, settings: StatsSettings, ranks: dict[str, int | None]) -> Analysis:
    results = [analyse_model(model_scores, settings) for model_scores in scores.models]
    return Analysis(settings=settings, groups=scores.groups, results=results, ranks=ranks, notes=list(scores.notes))


# ---------------------------------------------------------------- tables


def _frame(rows: list[dict[str, Any]], columns: list[str]):
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


def _with_rank(rows: list[dict[str, Any]], columns: list[str], ranks: dict[str, int | None]):
    """The paper's Tables 1 and 3 carry a RewardBench Rank column (empty for a model without one)."""
    frame = _frame(rows, columns)
    frame["rewardbench_rank"] = [ranks.get(model) for model in frame["model"]]
    frame["rewardbench_rank"] = frame["rewardbench_rank"].astype("Int64")
    return frame


def _pairs_frame(results: list[ModelResult], attribute: str):
    rows = [{"model": r.model, **asdict(pair)} for r in results for pair in getattr(r, attribute)]
    return _frame(rows, PAIR_COLUMNS)


def _significance_counts(results: list[ModelResult], attribute: str):
    rows = [
        {"model": r.model, "significant_pairs": sum(p.reject for p in getattr(r, attribute)),
         "total_pairs": len(getattr(r, attribute))}
        for r in results
    ]
    return _frame(rows, ["model", "significant_pairs", "total_pairs"])


def _table4(analysis: Analysis, reference: str | None, skip_note: str) -> tuple[Any, str]:
    columns = ["model", "pearson_r", "p_value"]
    if reference is None:
        return _frame([], columns), skip_note
    by_model = {r.model: r.group_means for r in analysis.results}
    rows = []
    for r in analysis.results:
        if r.model == reference:
            continue
        correlation = crossmodel.pearson(r.group_means, by_model[reference])
        rows.append({"model": r.model, "pearson_r": correlation.r, "p_value": correlation.p_value})
    note = f"Pearson r between each model's {len(analysis.groups)} group means and those of {reference}."
    if not rows:
        note += " No other model was analysed."
    return _frame(rows, columns), note


def _length_tables(analysis: Analysis):
    rows, adjusted_rows = [], []
    columns = ["model", "group_f", "group_p", "length_coef", "length_p", "raw_gap", "adjusted_gap",
               "gap_retained_percent", "note"]
    for r in analysis.results:
        if r.length is None:
            rows.append({"model": r.model, "note": r.length_note})
            continue
        fit = r.length
        rows.append({"model": r.model, "group_f": fit.group_f, "group_p": fit.group_p,
                     "length_coef": fit.length_coef, "length_p": fit.length_p, "raw_gap": fit.raw_gap,
                     "adjusted_gap": fit.adjusted_gap, "gap_retained_percent": fit.gap_retained_percent, "note": ""})
        for group, raw, adjusted in zip(analysis.groups, fit.raw_means, fit.adjusted_means, strict=True):
            adjusted_rows.append({"model": r.model, "group": group, "raw_mean": raw, "adjusted_mean": adjusted})
    frame = _frame(rows, columns)
    for column in columns[1:-1]:
        frame[column] = frame[column].astype("float64")
    return frame, _frame(adjusted_rows, ["model", "group", "raw_mean", "adjusted_mean"])


def _matrix_frame(names: list[str], matrix: np.ndarray):
    import pandas as pd

    frame = pd.DataFrame(matrix, columns=names)
    frame.insert(0, "model", names)
    return frame


def _matrix_columns(names: list[str]) -> dict[str, Column]:
    """The columns of a correlation matrix are model names: shown verbatim, r to 3 decimals."""
    return {name: Column(name, name, "fixed", 3) for name in names}


def build_tables(analysis: Analysis, reference: str | None, table4_note: str, footnote: str) -> list[Table]:
    settings, results, ranks = analysis.settings, analysis.results, analysis.ranks
    alpha = settings.alpha
    tables: list[Table] = []

    def add(stem: str, caption: str, frame, note: str = "", extra: dict[str, Column] | None = None) -> None:
        tables.append(Table(stem, caption, frame, f"{note} {footnote}".strip(), extra or {}))

    add("table1_anova", "One-way ANOVA of reward across groups",
        _with_rank([{"model": r.model, "f_statistic": r.anova.f_statistic, "p_value": r.anova.p_value}
                    for r in results], ["model", "f_statistic", "p_value"], ranks),
        "F test on (k - 1, N - k) df = "
        + ", ".join(sorted({f"({r.anova.df_between}, {r.anova.df_within})" for r in results})) + ".")
    add("table2_tukey", f"Tukey HSD: group pairs whose mean rewards differ at alpha = {alpha:g}",
        _significance_counts(results, "tukey"))
    add("tukey_pairs", "Tukey HSD, all group pairs (mean_diff = mean of group_b - mean of group_a)",
        _pairs_frame(results, "tukey"), f"Family-wise alpha = {alpha:g}.")
    add("table3_nmgd", "Normalised maximum group difference (NMGD)",
        _with_rank([{"model": r.model, "nmgd_percent": r.gap.nmgd_percent} for r in results],
                   ["model", "nmgd_percent"], ranks),
        "NMGD = (max - min of group means) / mean of group means x 100, sign kept as in Song et al. (2025); "
        "meaningless when the mean reward is near zero or negative (see table7_gap).")
    frame4, note4 = _table4(analysis, reference, table4_note)
    add("table4_pearson", f"Correlation of group means with the reference model ({reference or 'none'})",
        frame4, note4)
    add("group_means", "Mean reward per model and group with 95% t confidence intervals",
        _frame([{"model": r.model, **asdict(s)} for r in results for s in r.summaries],
               ["model", "group", "n", "mean", "std", "sem", "ci_low", "ci_high"]))
    add("table5_robust_anova", "Heteroscedasticity- and outlier-robust tests, and effect sizes",
        _frame([{"model": r.model, "welch_f": r.welch.f_statistic, "welch_p": r.welch.p_value,
                 "kruskal_h": r.kruskal.h_statistic, "kruskal_p": r.kruskal.p_value, "eta_sq": r.anova.eta_sq,
                 "omega_sq": r.anova.omega_sq, "cohens_f": r.anova.cohens_f} for r in results],
               ["model", "welch_f", "welch_p", "kruskal_h", "kruskal_p", "eta_sq", "omega_sq", "cohens_f"]),
        "Welch's ANOVA does not assume equal variances; Kruskal-Wallis compares ranks. "
        "Cohen's f: 0.10 small, 0.25 medium, 0.40 large.")
    add("table6_games_howell", f"Games-Howell: group pairs that differ at alpha = {alpha:g} (unequal variances)",
        _significance_counts(results, "games_howell"))
    add("games_howell_pairs", "Games-Howell, all group pairs (mean_diff = mean of group_b - mean of group_a)",
        _pairs_frame(results, "games_howell"), f"Family-wise alpha = {alpha:g}.")
    gap_rows = []
    for r in results:
        g = r.gap
        gap_rows.append({"model": r.model, "max_group": g.max_group, "min_group": g.min_group,
                         "scale_free_gap": g.scale_free_gap, "gap_ci_low": g.gap_ci_low, "gap_ci_high": g.gap_ci_high,
                         "nmgd_percent": g.nmgd_percent, "nmgd_ci_low": g.nmgd_ci_low, "nmgd_ci_high": g.nmgd_ci_high,
                         "perm_p_value": g.perm_p_value, "null_max_gap": g.null_max_gap,
                         "nmgd_unstable": g.nmgd_unstable})
    add("table7_gap", "Largest group gap with uncertainty",
        _frame(gap_rows, ["model", "max_group", "min_group", "scale_free_gap", "gap_ci_low", "gap_ci_high",
                          "nmgd_percent", "nmgd_ci_low", "nmgd_ci_high", "perm_p_value", "null_max_gap",
                          "nmgd_unstable"]),
        f"Scale-free gap = (max - min group mean) / pooled within-group SD. 95% bias-corrected percentile CIs from a "
        f"stratified bootstrap (B = {settings.bootstrap}, seed {settings.seed}); the p-value is for the range of group means "
        f"under {settings.permutations} label permutations, and the null max gap is the mean scale-free gap over "
        "those permutations (what noise alone gives at these group sizes). NMGD unstable: the bootstrap CI of the "
        "mean reward contains 0, so NMGD's size and sign are arbitrary.")
    length_frame, adjusted_frame = _length_tables(analysis)
    add("table8_length", "Length-controlled ANCOVA: reward ~ group + log(n_tokens)", length_frame,
        "Group F and p are Type II (group given length). Adjusted means are at the overall mean log length; "
        "gap retained = adjusted gap / raw gap x 100.")
    add("adjusted_group_means", "Raw and length-adjusted group means", adjusted_frame)
    vectors = {r.model: r.group_means for r in results}
    names = list(vectors)
    correlation_note = f"Correlations between models' vectors of {len(analysis.groups)} group means."
    if len(names) >= 1:
        add("correlation_pearson", "Pearson correlation of group-mean vectors between models",
            _matrix_frame(names, crossmodel.correlation_matrix(vectors, "pearson")), correlation_note,
            _matrix_columns(names))
        add("correlation_spearman", "Spearman correlation of group-mean vectors between models",
            _matrix_frame(names, crossmodel.correlation_matrix(vectors, "spearman")), correlation_note,
            _matrix_columns(names))
    add("table9_rank_agreement", "Agreement of models' group orderings",
        _frame([asdict(a) for a in crossmodel.rank_agreement(vectors)],
               ["model_a", "model_b", "kendall_tau", "spearman_rho", "top_group_match"]),
        "Kendall tau and Spearman rho between two models' orderings of the groups by mean reward; "
        "top_group_match: both favour the same group.")
    gap_by_model = {r.model: r.gap for r in results}
    metrics = {
        "nmgd_percent": {m: g.nmgd_percent for m, g in gap_by_model.items()},
        "abs_nmgd_percent": {m: abs(g.nmgd_percent) for m, g in gap_by_model.items()},
        "scale_free_gap": {m: g.scale_free_gap for m, g in gap_by_model.items()},
    }
    add("table10_rank_vs_fairness", "Are models ranked higher on RewardBench fairer?",
        _frame([asdict(crossmodel.rank_vs_fairness(metric, ranks, values)) for metric, values in metrics.items()],
               ["metric", "spearman_rho", "p_value", "n_models", "note"]),
        "Spearman rho between RewardBench rank (1 = best) and the gap metric; rho > 0 means better-ranked models "
        "have smaller gaps. Ranks from the model registry (Song et al. 2025, Tables 1 and 3).")
    points = _frame([{"model": m, "rewardbench_rank": ranks.get(m), "nmgd_percent": g.nmgd_percent,
                      "scale_free_gap": g.scale_free_gap} for m, g in gap_by_model.items()],
                    ["model", "rewardbench_rank", "nmgd_percent", "scale_free_gap"])
    points["rewardbench_rank"] = points["rewardbench_rank"].astype("Int64")
    add("rank_vs_fairness_points", "RewardBench rank and gap metrics per model", points)
    return tables


def run_record(analysis: Analysis, reference: str | None, notes: list[str], scores_dir: Path) -> dict[str, Any]:
    """What `fairness-summary` and a reader need to know about the run besides the tables."""
    return {
        "scores": str(scores_dir),
        "models": [r.model for r in analysis.results],
        "groups": analysis.groups,
        "settings": asdict(analysis.settings),
        "reference_model_used": reference,
        "notes": notes + [f"{r.model}: {r.length_note}" for r in analysis.results if r.length_note],
    }
