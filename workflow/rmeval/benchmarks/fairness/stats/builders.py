"""One function per fairness table: an Analysis laid out as the table's title, frame and note.

Each is named like its file and declared once in rmeval.benchmarks.fairness.catalogue (`builder`);
`analysis.build_tables` calls every builder of rule `fairness_stats` there, in catalogue order.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rmeval.benchmarks.fairness.stats import crossmodel, gap_intervals
from rmeval.benchmarks.fairness.stats import power as power_stats
from rmeval.intervals import CONFIDENCE
from rmeval.multiplicity import bh_q_values
from rmeval.tables import Column

if TYPE_CHECKING:
    import pandas as pd

    from rmeval.benchmarks.fairness.stats.analysis import Analysis, ModelResult, TableContext

PAIR_COLUMNS = ["model", "group_a", "group_b", "mean_diff", "std_error", "df", "q_statistic", "p_adj",
                "ci_low", "ci_high", "reject"]


@dataclass(frozen=True)
class TableDraft:
    """A table before its file name and the run's footnote (data source, n per group) are added."""

    caption: str
    frame: pd.DataFrame
    note: str = ""
    # Columns not in stats.tables.COLUMN_SPECS (e.g. the model names of a correlation matrix): key -> Column.
    extra_columns: dict[str, Column] = field(default_factory=dict)


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


def _with_rank(rows: list[dict[str, Any]], columns: list[str], ranks: dict[str, int | None]) -> pd.DataFrame:
    """The paper's Tables 1 and 3 carry a RewardBench Rank column (empty for a model without one)."""
    frame = _frame(rows, columns)
    frame["rewardbench_rank"] = [ranks.get(model) for model in frame["model"]]
    frame["rewardbench_rank"] = frame["rewardbench_rank"].astype("Int64")
    return frame


def _all_pairs(context: TableContext, test: str, attribute: str) -> TableDraft:
    """Every group pair of one post-hoc test (ModelResult.tukey or .games_howell)."""
    rows = [{"model": r.model, **asdict(pair)} for r in context.analysis.results for pair in getattr(r, attribute)]
    return TableDraft(f"{test}, all group pairs (mean_diff = mean of group_b - mean of group_a)",
                      _frame(rows, PAIR_COLUMNS), f"Family-wise alpha = {context.analysis.settings.alpha:g}.")


def _significance_counts(results: list[ModelResult], attribute: str) -> pd.DataFrame:
    rows = [
        {"model": r.model, "significant_pairs": sum(p.reject for p in getattr(r, attribute)),
         "total_pairs": len(getattr(r, attribute))}
        for r in results
    ]
    return _frame(rows, ["model", "significant_pairs", "total_pairs"])


def _length_tables(analysis: Analysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table8_length, adjusted_group_means): both come from the same ANCOVA fits."""
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


def _group_mean_vectors(analysis: Analysis) -> dict[str, np.ndarray]:
    return {r.model: r.group_means for r in analysis.results}


def _correlation(analysis: Analysis, method: str, title: str) -> TableDraft:
    """A model x model matrix; its columns are model names, shown verbatim with r to 3 decimals."""
    import pandas as pd

    vectors = _group_mean_vectors(analysis)
    names = list(vectors)
    frame = pd.DataFrame(crossmodel.correlation_matrix(vectors, method), columns=names)
    frame.insert(0, "model", names)
    return TableDraft(title, frame, f"Correlations between models' vectors of {len(analysis.groups)} group means.",
                      {name: Column(name, name, "fixed", 3) for name in names})


def _gap_metrics(analysis: Analysis) -> dict[str, dict[str, float]]:
    gap_by_model = {r.model: r.gap for r in analysis.results}
    return {
        "nmgd_percent": {m: g.nmgd_percent for m, g in gap_by_model.items()},
        "abs_nmgd_percent": {m: abs(g.nmgd_percent) for m, g in gap_by_model.items()},
        "scale_free_gap": {m: g.scale_free_gap for m, g in gap_by_model.items()},
    }


# ---------------------------------------------------------------- the tables, in catalogue order


def _with_q(rows: list[dict[str, Any]], p_column: str, q_column: str, baselines: Collection[str] = ()
            ) -> list[dict[str, Any]]:
    """`q_column`: Benjamini-Hochberg q-values of `p_column` over the table's models; trivial baselines form a family
    of their own, so that adding one to a run changes no model's q-value."""
    for family in ([row for row in rows if row["model"] not in baselines],
                   [row for row in rows if row["model"] in baselines]):
        for row, q in zip(family, bh_q_values([row[p_column] for row in family]), strict=True):
            row[q_column] = q
    return rows


Q_NOTE = ("q: Benjamini-Hochberg q-value over the table's models (false discovery rate); trivial baselines, if "
          "any, are a family of their own.")


def table1_anova(context: TableContext) -> TableDraft:
    results, ranks = context.analysis.results, context.analysis.ranks
    rows = _with_q([{"model": r.model, "f_statistic": r.anova.f_statistic, "p_value": r.anova.p_value,
                     "note": r.note} for r in results], "p_value", "q_value", context.analysis.baselines)
    frame = _with_rank(rows, ["model", "f_statistic", "p_value", "q_value", "note"], ranks)
    return TableDraft(
        "One-way ANOVA of reward across groups",
        frame[["model", "f_statistic", "p_value", "q_value", "rewardbench_rank", "note"]],
        "F test on (k - 1, N - k) df = "
        + ", ".join(sorted({f"({r.anova.df_between}, {r.anova.df_within})" for r in results})) + ". " + Q_NOTE)


def table2_tukey(context: TableContext) -> TableDraft:
    settings = context.analysis.settings
    frame = _significance_counts(context.analysis.results, "tukey")
    frame["pairs_ci_low"] = [r.tukey_count_interval[0] for r in context.analysis.results]
    frame["pairs_ci_high"] = [r.tukey_count_interval[1] for r in context.analysis.results]
    return TableDraft(f"Tukey HSD: group pairs whose mean rewards differ at alpha = {settings.alpha:g}", frame,
                      "Pairs CI: 95% percentile interval of the significant-pair count over a stratified bootstrap "
                      f"(B = {settings.bootstrap}, seed {settings.seed}), widened to hold the observed count: how "
                      "many pairs a rerun of this design would find.")


def tukey_pairs(context: TableContext) -> TableDraft:
    return _all_pairs(context, "Tukey HSD", "tukey")


def table3_nmgd(context: TableContext) -> TableDraft:
    return TableDraft(
        "Normalised maximum group difference (NMGD)",
        _with_rank([{"model": r.model, "nmgd_percent": r.gap.nmgd_percent} for r in context.analysis.results],
                   ["model", "nmgd_percent"], context.analysis.ranks),
        "NMGD = (max - min of group means) / mean of group means x 100, sign kept as in Song et al. (2025); "
        "meaningless when the mean reward is near zero or negative (see table7_gap).")


def table4_pearson(context: TableContext) -> TableDraft:
    analysis, reference = context.analysis, context.reference
    caption = f"Correlation of group means with the reference model ({reference or 'none'})"
    columns = ["model", "pearson_r", "ci_low", "ci_high", "p_value"]
    if reference is None:
        return TableDraft(caption, _frame([], columns), context.table4_note)
    by_model = _group_mean_vectors(analysis)
    rows = []
    for r in analysis.results:
        if r.model == reference:
            continue
        correlation = crossmodel.pearson(r.group_means, by_model[reference])
        rows.append({"model": r.model, "pearson_r": correlation.r, "ci_low": correlation.ci_low,
                     "ci_high": correlation.ci_high, "p_value": correlation.p_value})
    note = (f"Pearson r between each model's {len(analysis.groups)} group means and those of {reference}; 95% CI by "
            f"Fisher's z on the {len(analysis.groups)} points (the group means' own noise is not in it).")
    if not rows:
        note += " No other model was analysed."
    return TableDraft(caption, _frame(rows, columns), note)


def group_means(context: TableContext) -> TableDraft:
    rows = [{"model": r.model, **asdict(s), "truncated_percent": _percent(share)}
            for r in context.analysis.results
            for s, share in zip(r.summaries, r.truncated_shares or [None] * len(r.summaries), strict=True)]
    frame = _frame(rows, ["model", "group", "n", "mean", "std", "sem", "ci_low", "ci_high", "truncated_percent"])
    frame["truncated_percent"] = frame["truncated_percent"].astype("float64")
    return TableDraft(
        "Mean reward per model and group with 95% t confidence intervals", frame,
        "Truncated: the share of the group's responses cut at the model's max_length (the model read only their "
        "start); shares that differ between groups confound every group comparison.")


def _percent(share: float | None) -> float | None:
    return None if share is None else 100.0 * share


def truncation_note(analysis: Analysis) -> str:
    """Whether truncation confounds the length analysis (Table 8's note): a cut response's n_tokens is the cap."""
    known = [r for r in analysis.results if r.truncated_shares and None not in r.truncated_shares]
    if not known:
        return "Truncation: the score files do not say which responses were cut at max_length."
    cut = [r.model for r in known if max(r.truncated_shares) > 0]
    if not cut:
        return "Truncation: none; n_tokens is every response's full length."
    differs = [r.model for r in known if r.truncation_differs]
    text = (f"Truncation: {', '.join(cut)} cut responses at max_length (group_means, truncated_percent); a cut "
            "response's n_tokens is the cap, not its length.")
    if differs:
        return text + (f" Its share differs between groups for {', '.join(differs)}: truncation confounds this "
                       "length analysis and the group comparison; raise max_length.")
    return text + " The share is the same in every group, so it does not confound the group comparison."


def table5_robust_anova(context: TableContext) -> TableDraft:
    return TableDraft(
        "Heteroscedasticity- and outlier-robust tests, and effect sizes",
        _frame(_with_q(_with_q([{"model": r.model, "welch_f": r.welch.f_statistic, "welch_p": r.welch.p_value,
                                 "kruskal_h": r.kruskal.h_statistic, "kruskal_p": r.kruskal.p_value,
                                 "eta_sq": r.anova.eta_sq, "omega_sq": r.anova.omega_sq, "cohens_f": r.anova.cohens_f,
                                 "note": r.note} for r in context.analysis.results], "welch_p", "welch_q",
                               context.analysis.baselines), "kruskal_p", "kruskal_q", context.analysis.baselines),
               ["model", "welch_f", "welch_p", "welch_q", "kruskal_h", "kruskal_p", "kruskal_q", "eta_sq", "omega_sq",
                "cohens_f", "note"]),
        "Welch's ANOVA does not assume equal variances; Kruskal-Wallis compares ranks. "
        "Cohen's f: 0.10 small, 0.25 medium, 0.40 large. " + Q_NOTE)


def table6_games_howell(context: TableContext) -> TableDraft:
    alpha = context.analysis.settings.alpha
    return TableDraft(f"Games-Howell: group pairs that differ at alpha = {alpha:g} (unequal variances)",
                      _significance_counts(context.analysis.results, "games_howell"))


def games_howell_pairs(context: TableContext) -> TableDraft:
    return _all_pairs(context, "Games-Howell", "games_howell")


def table7_gap(context: TableContext) -> TableDraft:
    settings = context.analysis.settings
    gap_rows = []
    for r in context.analysis.results:
        g = r.gap
        gap_rows.append({"model": r.model, "max_group": g.max_group, "min_group": g.min_group,
                         "scale_free_gap": g.scale_free_gap, "gap_ci_low": g.gap_ci_low, "gap_ci_high": g.gap_ci_high,
                         "nmgd_percent": g.nmgd_percent, "nmgd_ci_low": g.nmgd_ci_low, "nmgd_ci_high": g.nmgd_ci_high,
                         "perm_p_value": g.perm_p_value, "null_max_gap": g.null_max_gap,
                         "nmgd_unstable": g.nmgd_unstable, "interval_family": g.interval_family,
                         "note": g.note or r.note})
    _with_q(gap_rows, "perm_p_value", "perm_q_value", context.analysis.baselines)
    level = 100 * CONFIDENCE
    return TableDraft(
        "Largest group gap with uncertainty",
        _frame(gap_rows, ["model", "max_group", "min_group", "scale_free_gap", "gap_ci_low", "gap_ci_high",
                          "nmgd_percent", "nmgd_ci_low", "nmgd_ci_high", "perm_p_value", "perm_q_value",
                          "null_max_gap", "nmgd_unstable", "interval_family", "note"]),
        f"Scale-free gap = (max - min group mean) / pooled within-group SD. {level:g}% CIs (CI family): the lower "
        f"bound is the largest distance from 0 of the simultaneous pairwise intervals at {level:g}% (Games-Howell "
        "1976; Tukey-Kramer where a pair of groups has no variance), exact when the groups are equal; the upper "
        f"bound inverts a parametric-bootstrap test of the range at {100 - (100 - level) / 2:g}% (each candidate "
        "range played at the group means restricted to it; the other groups shrunk by the method-of-moments factor; "
        f"{gap_intervals.DRAWS} draws seeded per model, seed {settings.seed}). The divisor's uncertainty (the pooled "
        "SD's, kurtosis-adjusted after Bonett 2006; for NMGD the mean of group means') is carried in both bounds. "
        "Each CI holds its estimate and covered the truth about 95% of the time or more in every simulated design, "
        "equal groups included (CONTRIBUTING.md). The p-value is for the range of group "
        f"means under {settings.permutations} label permutations (seed {settings.seed}), and the null max gap is "
        "the mean scale-free gap over those permutations (what noise alone gives at these group sizes). "
        "NMGD unstable: the interval of the mean reward contains 0, so NMGD's size and sign are arbitrary (its CI "
        "is unbounded). " + Q_NOTE)


def table8_length(context: TableContext) -> TableDraft:
    return TableDraft(
        "Length-controlled ANCOVA: reward ~ group + log(n_tokens)", _length_tables(context.analysis)[0],
        "Group F and p are Type II (group given length). Adjusted means are at the overall mean log length; "
        f"gap retained = adjusted gap / raw gap x 100. {truncation_note(context.analysis)}")


def adjusted_group_means(context: TableContext) -> TableDraft:
    return TableDraft("Raw and length-adjusted group means", _length_tables(context.analysis)[1])


def correlation_pearson(context: TableContext) -> TableDraft:
    return _correlation(context.analysis, "pearson", "Pearson correlation of group-mean vectors between models")


def correlation_spearman(context: TableContext) -> TableDraft:
    return _correlation(context.analysis, "spearman", "Spearman correlation of group-mean vectors between models")


def table9_rank_agreement(context: TableContext) -> TableDraft:
    return TableDraft(
        "Agreement of models' group orderings",
        _frame([asdict(a) for a in crossmodel.rank_agreement(_group_mean_vectors(context.analysis))],
               ["model_a", "model_b", "kendall_tau", "spearman_rho", "top_group_match"]),
        "Kendall tau and Spearman rho between two models' orderings of the groups by mean reward; "
        "top_group_match: both favour the same group.")


def table10_rank_vs_fairness(context: TableContext) -> TableDraft:
    ranks = context.analysis.ranks
    return TableDraft(
        "Are models ranked higher on RewardBench fairer?",
        _frame([asdict(crossmodel.rank_vs_fairness(metric, ranks, values))
                for metric, values in _gap_metrics(context.analysis).items()],
               ["metric", "spearman_rho", "p_value", "n_models", "note"]),
        "Spearman rho between RewardBench rank (1 = best) and the gap metric; rho > 0 means better-ranked models "
        "have smaller gaps. Ranks from the model registry (Song et al. 2025, Tables 1 and 3).")


def rank_vs_fairness_points(context: TableContext) -> TableDraft:
    ranks = context.analysis.ranks
    points = _frame([{"model": r.model, "rewardbench_rank": ranks.get(r.model), "nmgd_percent": r.gap.nmgd_percent,
                      "scale_free_gap": r.gap.scale_free_gap} for r in context.analysis.results],
                    ["model", "rewardbench_rank", "nmgd_percent", "scale_free_gap"])
    points["rewardbench_rank"] = points["rewardbench_rank"].astype("Int64")
    return TableDraft("RewardBench rank and gap metrics per model", points)


def power(context: TableContext) -> TableDraft:
    """power.csv: per model, the omnibus ANOVA's smallest detectable Cohen's f at power 0.8 (the MDE), the observed
    f, and the power to detect the paper's effect for that model."""
    alpha = context.analysis.settings.alpha
    rows = []
    for r in context.analysis.results:
        k = len(r.summaries)
        n = sum(s.n for s in r.summaries)
        paper_f = context.paper_effects.get(r.model, float("nan"))
        rows.append({"model": r.model, "test": "anova", "n": n, "groups": k, "alpha": alpha,
                     "mde_cohens_f": power_stats.anova_mde(n, k, alpha), "cohens_f": r.anova.cohens_f,
                     "paper_cohens_f": paper_f, "power_at_paper_effect": power_stats.anova_power(paper_f, n, k, alpha),
                     "note": r.note})
    frame = _frame(rows, ["model", "test", "n", "groups", "alpha", "mde_cohens_f", "cohens_f", "paper_cohens_f",
                          "power_at_paper_effect", "note"])
    return TableDraft(
        f"Power: the smallest between-group effect each run could detect (power {power_stats.TARGET_POWER:g}, "
        f"alpha = {alpha:g})",
        frame,
        "One-way ANOVA F test; MDE = the Cohen's f detected with power 0.8 (noncentral F with lambda = f^2 N, as "
        "statsmodels FTestAnovaPower). Paper's f from its Table 1 F and dfs: f = sqrt(F df1 / df2); power at it "
        "= the chance this run's test finds an effect that large. Cohen's f: 0.10 small, 0.25 medium, 0.40 large.")
