"""The fairness tables in plain words: the fairness section of the run's summary (results/summary.md, written by
`rmeval run-summary` through `summary_section`), and `rmeval fairness-summary`, the same section alone.

One short paragraph per model (is the unfairness significant, how large, which groups are favoured, does abstract
length explain it), plus the cross-model findings and how the run's reproduction table compares with the
published values. A trivial baseline (the run record's `baselines`) is named as one, left out of the count of
unfair models, and a length baseline's gap is set beside the models' as what length alone produces. Reads only the CSVs that `rmeval fairness-stats` writes (the catalogue's `summary_inputs`) and
the run's reproduction table, so it can be rerun without recomputing anything."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.fairness.catalogue import BENCHMARK, made_by
from rmeval.errors import RmevalError
from rmeval.io.atomic import write_text_atomic
from rmeval.run_outputs.catalogue import RUN

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext

# What the summary reads is the catalogue's `summary_inputs` (the run_summary rule's input too); of those tables it
# cannot do without these (by file stem), and says less when another is missing.
REQUIRED = ("table1_anova", "table5_robust_anova", "table6_games_howell", "table7_gap", "group_means",
            "games_howell_pairs")
# The run's reproduction table (rmeval.run_outputs): its verdicts are counted in "Across models" when it exists.
REPRODUCTION = RUN.get("reproduction")

GAP = "scale_free_gap"


def _gap(value: Any) -> str:
    """A scale-free gap (or its bound) as the console, the leaderboard and the figures show it (the catalogue's)."""
    assert BENCHMARK.compare is not None
    return BENCHMARK.compare.show(GAP, value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval fairness-summary", description=__doc__)
    parser.add_argument("--tables", required=True, type=Path,
                        help="folder written by `rmeval fairness-stats` (and reproduction.csv, when there)")
    parser.add_argument("--out", required=True, type=Path, help="Markdown file to write")
    parser.add_argument("--alpha", type=float, default=None,
                        help="significance level (default: the one fairness-stats used, else stats.alpha's default)")
    parser.add_argument("--section", type=Path, action="append", default=[],
                        help="a Markdown file appended as its own section (e.g. the RewardMATH summary); "
                             "repeatable, in order")
    return parser


def _p(value: float) -> str:
    if pd_isna(value):
        return "p undefined"
    if value == 0.0:
        return "p < 1e-300"
    return f"p = {value:.2g}" if value < 0.001 else f"p = {value:.3f}"


def _gap_size(gap: float) -> str:
    """Words for a standardised mean difference (Cohen's conventions for d)."""
    gap = abs(gap)
    if gap < 0.2:
        return "negligible"
    if gap < 0.5:
        return "small"
    if gap < 0.8:
        return "medium"
    return "large"


def _read_tables(paths: Mapping[str, Path]) -> dict[str, Any]:
    """The tables by file stem, from `paths` (stem -> file); a missing optional table is left out."""
    import pandas as pd

    tables: dict[str, Any] = {}
    for stem, path in paths.items():
        if path.exists():
            tables[stem] = pd.read_csv(path)
        elif stem in REQUIRED:
            raise RmevalError(f"{path} is missing; run `{made_by(path.name)}` first")
    return tables


def _table_paths(path_of_key: Callable[[str], Path], reproduction: Path) -> dict[str, Path]:
    """stem -> file of every table the summary reads (`summary_inputs` but the run record, then the run's
    reproduction table); `path_of_key(key)` places a catalogue key."""
    paths = {BENCHMARK.get(key).stem: path_of_key(key) for key in BENCHMARK.summary_inputs
             if BENCHMARK.get(key).suffix == "csv"}
    paths[REPRODUCTION.stem] = reproduction
    return paths


def _record(path: Path) -> dict[str, Any]:
    """The run record of `rmeval fairness-stats` (settings, groups, notes); {} when absent."""
    return json.loads(path.read_text()) if path.exists() else {}


def _row(frame: Any, model: str) -> Any:
    rows = frame[frame["model"] == model]
    if rows.empty:
        raise RmevalError(f"model {model!r} is in table1_anova.csv but missing from another table")
    return rows.iloc[0]


def _label(group: str) -> str:
    """Plain words for a config group key: `computer_science` -> `computer science`."""
    return group.replace("_", " ")


def _favoured(pairs: Any, means: Any, model: str, alpha: float) -> str:
    """Groups that significantly out-score (or under-score) others in Games-Howell tests."""
    model_pairs = pairs[(pairs["model"] == model) & (pairs["p_adj"] < alpha)]
    groups = list(means["group"])
    wins = dict.fromkeys(groups, 0)
    losses = dict.fromkeys(groups, 0)
    for pair in model_pairs.itertuples(index=False):
        winner, loser = (pair.group_b, pair.group_a) if pair.mean_diff > 0 else (pair.group_a, pair.group_b)
        wins[winner] += 1
        losses[loser] += 1
    others = len(groups) - 1
    ordered = list(means.sort_values("mean", ascending=False)["group"])
    favoured = [f"{_label(g)} ({wins[g]}/{others})" for g in sorted(ordered, key=lambda g: -wins[g]) if wins[g]][:3]
    disfavoured = [f"{_label(g)} ({losses[g]}/{others})" for g in sorted(ordered[::-1], key=lambda g: -losses[g])
                   if losses[g]][:3]
    if not favoured:
        return (f"**Favoured:** no group differs significantly from another; highest mean {_label(ordered[0])}, "
                f"lowest {_label(ordered[-1])}.")
    return f"**Favoured:** {', '.join(favoured)}; **disfavoured:** {', '.join(disfavoured)}."


def _length_sentence(tables: dict[str, Any], model: str, alpha: float) -> str:
    frame = tables.get("table8_length")
    if frame is None or model not in set(frame["model"]):
        return "**Length:** not analysed."
    row = _row(frame, model)
    if pd_isna(row["group_f"]):
        return f"**Length:** not analysed ({row['note']})."
    if row["length_p"] < alpha:
        direction = "higher" if row["length_coef"] > 0 else "lower"
        text = f"longer abstracts score {direction} ({_p(row['length_p'])})"
    else:
        text = f"no significant length effect ({_p(row['length_p'])})"
    retained = row["gap_retained_percent"]
    raw_significant = _row(tables["table1_anova"], model)["p_value"] < alpha
    if row["group_p"] < alpha:
        still = "still significant" if raw_significant else "significant"
    else:
        still = "no longer significant" if raw_significant else "not significant"
    if retained >= 80:
        verdict = "length explains little of the gap"
    elif retained >= 50:
        verdict = "length explains part of the gap"
    else:
        verdict = "length explains most of the gap"
    return (f"**Length:** {text}; after adjusting for length {retained:.0f}% of the gap remains and the group "
            f"effect is {still} ({_p(row['group_p'])}): {verdict}.")


def pd_isna(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _perm_p(value: float, permutations: int | None) -> str:
    if permutations and value <= 1.0 / (permutations + 1) * (1 + 1e-9):
        return f"p <= {value:.2g}, the smallest {permutations} permutations can give"
    return _p(value)


def _pairs_phrase(tables: dict[str, Any], model: str, gh: Any) -> str:
    """Games-Howell's count, and Tukey's beside it with the one reason they can differ."""
    text = f"{int(gh['significant_pairs'])} of {int(gh['total_pairs'])} group pairs differ (Games-Howell"
    table2 = tables.get("table2_tukey")
    if table2 is not None and model in set(table2["model"]):
        tukey = int(_row(table2, model)["significant_pairs"])
        if tukey == int(gh["significant_pairs"]):
            return text + f"; Tukey HSD, Table 2, agrees: {tukey})"
        return (text + f", which allows unequal variances; Tukey HSD in Table 2 assumes equal ones and finds "
                f"{tukey})")
    return text + ")"


def _gap_sentence(gap: Any, robust: Any, alpha: float, permutations: int | None) -> str:
    """The largest gap against what noise alone gives: a gap whose permutation p >= alpha is not called a size."""
    observed = gap["scale_free_gap"]
    null = gap.get("null_max_gap")
    null_text = (f"; noise alone gives {_gap(null)} on average at these group sizes"
                 if null is not None and not pd_isna(null) else "")
    text = (f"**How large:** {_label(gap['max_group'])} over {_label(gap['min_group'])} by {_gap(observed)} "
            f"within-group SDs (95% CI {_gap(gap['gap_ci_low'])} to {_gap(gap['gap_ci_high'])}{null_text}; "
            f"permutation {_perm_p(gap['perm_p_value'], permutations)}), ")
    chance = gap["perm_p_value"] >= alpha
    excludes_zero = gap["gap_ci_low"] > 0.0
    if chance and not excludes_zero:
        text += f"not distinguishable from chance at alpha = {alpha:g} (the CI reaches 0)"
    elif not chance and excludes_zero:
        text += f"a {_gap_size(observed)} gap"
    elif chance:  # two different tests near their threshold: say so rather than contradict each other
        text += (f"borderline: the permutation test does not reject at alpha = {alpha:g} but the simultaneous "
                 "interval excludes 0")
    else:
        text += (f"borderline: the permutation test rejects at alpha = {alpha:g} but the simultaneous interval "
                 "reaches 0")
    return text + f"; group explains {100 * robust['eta_sq']:.1f}% of the variance."


def _q(row: Any, column: str) -> str:
    """ " (q = ...)" beside a p-value when the table has its Benjamini-Hochberg q-value."""
    value = row.get(column)
    if value is None or pd_isna(value):
        return ""
    return f" ({_p(value).replace('p', 'q', 1)})"


def _power_phrase(tables: dict[str, Any], model: str) -> str:
    """What a non-significant ANOVA could have found: its minimum detectable effect (power.csv)."""
    frame = tables.get("power")
    if frame is None or model not in set(frame["model"]):
        return ""
    row = _row(frame[frame["test"] == "anova"], model)
    if pd_isna(row["mde_cohens_f"]):
        return ""
    return (f"no difference found; this run had 80% power for Cohen's f >= {row['mde_cohens_f']:.2f} "
            f"(power.csv), so a smaller group effect may be there")


def _undefined_paragraph(model: str, note: str, gap: Any) -> list[str]:
    """A model whose rewards leave the tests undefined (constant within groups, or groups of one)."""
    return [f"### {model}", "", f"- **Undefined:** {note}.",
            f"- Group means range from {_label(gap['min_group'])} to {_label(gap['max_group'])}; NMGD "
            f"{gap['nmgd_percent']:.1f}%.", ""]


def _heading(model: str, baselines: dict[str, Any]) -> str:
    """A model's paragraph heading; a baseline's names its rule."""
    if model in baselines:
        return f"### {model} (trivial baseline, not a reward model: {baselines[model]['rule']})"
    return f"### {model}"


def length_alone_lines(tables: dict[str, Any], baselines: dict[str, Any]) -> list[str]:
    """What response length alone produces: each length baseline's scale-free gap (95% CI) beside the models'."""
    gaps = tables["table7_gap"]
    lines = []
    models = [m for m in gaps["model"] if m not in baselines]

    def gap_text(model: str) -> str:
        row = _row(gaps, model)
        if pd_isna(row["scale_free_gap"]):
            return f"{model} undefined"
        return f"{model} {_gap(row['scale_free_gap'])} ({_gap(row['gap_ci_low'])} to {_gap(row['gap_ci_high'])})"

    for model, rule in baselines.items():
        if rule.get("kind") != "length" or model not in set(gaps["model"]):
            continue
        row = _row(gaps, model)
        if pd_isna(row["scale_free_gap"]):
            lines.append(f"- Length alone: {model}'s gap is undefined ({row['note']}).")
            continue
        beside = f"; the models': {', '.join(gap_text(m) for m in models)}" if models else (
            "; no reward model ran beside it")
        lines.append(
            f"- Length alone: the length baseline {model} ({rule['rule']}) has a scale-free gap of "
            f"{_gap(row['scale_free_gap'])} SD (95% CI {_gap(row['gap_ci_low'])} to {_gap(row['gap_ci_high'])}; "
            f"{_label(row['max_group'])} over {_label(row['min_group'])}){beside}. A model's gap near this one may "
            "come from the responses' lengths rather than their groups (Table 8 adjusts each model for length).")
    return lines


def model_paragraph(tables: dict[str, Any], model: str, alpha: float, permutations: int | None = None,
                    baselines: dict[str, Any] | None = None) -> list[str]:
    baselines = baselines or {}
    from rmeval.benchmarks.fairness.stats.marks import without_baseline_note

    anova = _row(tables["table1_anova"], model)
    robust = _row(tables["table5_robust_anova"], model)
    gh = _row(tables["table6_games_howell"], model)
    gap = _row(tables["table7_gap"], model)
    note = without_baseline_note(anova.get("note")) if model in baselines else anova.get("note")
    if pd_isna(anova["p_value"]) or pd_isna(gap["scale_free_gap"]):
        gap_note = without_baseline_note(gap.get("note")) if model in baselines else gap.get("note", "")
        return [_heading(model, baselines), *_undefined_paragraph(
            model, str(note if isinstance(note, str) and note else gap_note), gap)[1:]]
    means = tables["group_means"][tables["group_means"]["model"] == model]
    significant = anova["p_value"] < alpha
    robust_agrees = all(pd_isna(robust[column]) or (robust[column] < alpha) == significant
                        for column in ("welch_p", "kruskal_p"))
    verdict = "**Significantly unfair:** yes" if significant else "**Significantly unfair:** no"
    tests = (f"ANOVA {_p(anova['p_value'])}{_q(anova, 'q_value')}; Welch {_p(robust['welch_p'])}, "
             f"Kruskal-Wallis {_p(robust['kruskal_p'])}")
    agreement = "" if robust_agrees else " (the robust tests disagree: treat with care)"
    found = "" if significant else _power_phrase(tables, model)
    significance = (f"{verdict} ({tests}){agreement}; " + (f"{found}; " if found else "")
                    + f"{_pairs_phrase(tables, model, gh)}.")
    size = _gap_sentence(gap, robust, alpha, permutations)
    if isinstance(note, str) and note:
        significance += f" Note: {note}."
    if bool(gap.get("nmgd_unstable", False)):
        size += f" NMGD ({gap['nmgd_percent']:.1f}%) is meaningless here: the mean reward is indistinguishable from 0."
    elif means["mean"].mean() < 0:
        size += f" NMGD {gap['nmgd_percent']:.1f}% is negative only because the mean reward is."
    else:
        size += f" NMGD {gap['nmgd_percent']:.1f}% (CI {gap['nmgd_ci_low']:.1f} to {gap['nmgd_ci_high']:.1f})."
        if math.isinf(gap["nmgd_ci_high"]):
            size = size[:-len(" (CI -inf to inf).")] + " (CI unbounded: the mean reward may be 0)."
    favoured = _favoured(tables["games_howell_pairs"], means, model, alpha)
    return [_heading(model, baselines), "", f"- {significance}", f"- {size}", f"- {favoured}",
            f"- {_length_sentence(tables, model, alpha)}", ""]


def reproduction_line(tables: dict[str, Any]) -> str | None:
    """One line on how our numbers compare with the published ones (reproduction.csv), if it was written."""
    frame = tables.get("reproduction")
    if frame is None:
        return None
    from rmeval.benchmarks.fairness.capability import CLAIM_MODEL

    frame = frame[frame["model"] != CLAIM_MODEL]  # the paper's claim has a sentence of its own (claim_sentence)
    if frame.empty:
        return "- Reproduction: no model of this run has published values (see reproduction.md)."
    def named(verdict: str) -> str:
        rows = frame[frame["verdict"] == verdict]
        shown = [f"{row.model} {row.statistic}" for row in rows.head(4).itertuples(index=False)]
        more = f" and {len(rows) - 4} more" if len(rows) > 4 else ""
        return f" ({', '.join(shown)}{more})" if shown else ""

    counts = {verdict: int((frame["verdict"] == verdict).sum())
              for verdict in ("same conclusion", "differs", "inconclusive", "not comparable")}
    text = (f"- Reproduction: of {len(frame)} comparisons with the published values, this run supports "
            f"{counts['same conclusion']}, contradicts {counts['differs']}{named('differs')} and cannot decide "
            f"{counts['inconclusive']}{named('inconclusive')} (its interval holds both conclusions, or its power for "
            "the paper's effect is below 0.8)")
    if counts["not comparable"]:
        text += f"; {counts['not comparable']} are not comparable"
    return text + " (rules in reproduction.md)."


def counted(names: list[str], baselines: Mapping[str, Any]) -> str:
    """"2 reward models and 1 trivial baseline (length-baseline)": real models apart from baselines, every count
    of the summary in the same words."""
    real = [name for name in names if name not in baselines]
    base = [name for name in names if name in baselines]
    text = f"{len(real)} reward model{'' if len(real) == 1 else 's'}"
    if base:
        text += f" and {len(base)} trivial baseline{'' if len(base) == 1 else 's'} ({', '.join(base)})"
    return text


def calibration_line(tables: dict[str, Any], alpha: float, baselines: Mapping[str, Any] | None = None) -> str | None:
    """One sentence from calibration.csv: did the ANOVA hold its level on shuffled labels, and how often did it find
    a gap of the paper's size (else of the run's MDE)?"""
    frame = tables.get("calibration")
    if frame is None:
        return None
    rows = frame[(frame["test"] == "anova") & frame["rejection_rate"].notna()]
    if rows.empty:
        return "- Calibration: no model could be calibrated (calibration.csv says why)."

    def pooled(scenario: str) -> tuple[float, list[str]]:
        chosen = rows[rows["scenario"] == scenario]
        trials = int(chosen["replicates"].sum())
        return (float((chosen["rejection_rate"] * chosen["replicates"]).sum()) / trials if trials else math.nan,
                list(dict.fromkeys(chosen["model"])))

    size, models = pooled("shuffled")
    held = "held" if abs(size - alpha) <= 2.0 * math.sqrt(alpha * (1 - alpha) / rows[rows["scenario"] == "shuffled"][
        "replicates"].sum()) + 1e-12 else "did not hold"
    text = (f"- Calibration: at this sample size the ANOVA {held} its {100 * alpha:g}% level on shuffled labels "
            f"({100 * size:.1f}% over {counted(models, baselines or {})})")
    paper, _ = pooled("paper_nmgd")
    mde, _ = pooled("mde")
    coverage = rows["coverage"].mean()
    if not math.isnan(paper):
        text += f" and found a gap of the paper's size {100 * paper:.0f}% of the time"
    elif not math.isnan(mde):
        text += f" and found a gap at the run's MDE {100 * mde:.0f}% of the time (80% expected)"
    return text + f"; the gap's 95% CIs covered the planted gap {100 * coverage:.0f}% of the time (calibration.csv)."


def better_is_fairer_lines(tables: dict[str, Any], alpha: float) -> list[str]:
    """"Better models are fairer" against the capability this run measured (fairness_vs_capability_correlations,
    one line per measure); only when it measured none, against the registry's published RewardBench ranks, said so."""
    from rmeval.benchmarks.fairness.capability import PUBLISHED_RANK

    correlations = tables.get("fairness_vs_capability_correlations")
    if correlations is not None:
        gap = correlations[correlations["fairness"] == "scale_free_gap"]
        measured = gap[gap["measure"] != PUBLISHED_RANK]
        if not measured.empty:
            return [_better_is_fairer(row, alpha, f"this run's {row.measure} score")
                    for row in measured.itertuples(index=False)]
    table10 = tables.get("table10_rank_vs_fairness")
    row = None if table10 is None else table10[table10["metric"] == "scale_free_gap"]
    if row is None or row.empty:
        return []
    fallback = "the registry's published RewardBench rank (fallback: this run measured no capability)"
    rho, p, n = row.iloc[0]["spearman_rho"], row.iloc[0]["p_value"], row.iloc[0]["n_models"]
    if math.isnan(rho):
        return [f"- \"Better models are fairer\" by {fallback} was not tested: {row.iloc[0]['note']}."]
    claim = "supports" if rho > 0 and p < alpha else "does not support"
    return [f"- \"Better models are fairer\" by {fallback}: Spearman rho between rank and the scale-free gap is "
            f"{rho:.2f} ({_p(p)}, {int(n)} models), which {claim} the claim."]


def _better_is_fairer(row: Any, alpha: float, basis: str) -> str:
    if pd_isna(row.spearman_rho):
        return f"- \"Better models are fairer\" by {basis} was not tested: {row.note}."
    fairer = not pd_isna(row.better_is_fairer) and bool(row.better_is_fairer)
    claim = "supports" if fairer and row.spearman_p < alpha else "does not support"
    low, high = getattr(row, "spearman_ci_low", math.nan), getattr(row, "spearman_ci_high", math.nan)
    interval = "" if pd_isna(low) or pd_isna(high) else f"95% CI {low:.2f} to {high:.2f}; "
    return (f"- \"Better models are fairer\" by {basis}: Spearman rho between it and the scale-free gap is "
            f"{row.spearman_rho:.2f} ({interval}{_p(row.spearman_p)}, {int(row.n)} models), which {claim} the claim.")


def cross_model_lines(tables: dict[str, Any], record: dict[str, Any], alpha: float,
                      corpus: dict[str, Any] | None = None) -> list[str]:
    lines = ["## Across models", "", *length_alone_lines(tables, record.get("baselines") or {})]
    table4 = tables.get("table4_pearson")
    reference = record.get("reference_model_used")
    if table4 is not None and reference and not table4.empty:
        baselines = record.get("baselines") or {}
        pairs = ", ".join(f"{row.model}{' (baseline)' if row.model in baselines else ''} r = {row.pearson_r:.2f}"
                          for row in table4.itertuples(index=False))
        lines.append(f"- Agreement with {reference} on which groups get higher rewards (Pearson r of group "
                     f"means): {pairs}.")
    else:
        reason = next((n for n in record.get("notes", []) if n.startswith("Table 4")), "Table 4 was skipped.")
        lines.append(f"- {reason}")
    lines += better_is_fairer_lines(tables, alpha)
    capability = tables.get("fairness_vs_capability")
    if capability is not None:
        from rmeval.benchmarks.fairness.capability import claim_from_table, claim_sentence

        lines.append(claim_sentence(claim_from_table(capability)))
    calibration = calibration_line(tables, alpha, record.get("baselines") or {})
    if calibration:
        lines.append(calibration)
    reproduction = reproduction_line(tables)
    if corpus is not None:
        from rmeval.benchmarks.fairness.corpus.detect import NOT_APPLICABLE

        reproduction = f"- {NOT_APPLICABLE}"
    if reproduction:
        lines.append(reproduction)
    return lines + [""]


def paired_lines(paired: Any, alpha: float) -> list[str]:
    """The paired design's sentences, per model, and what each design shows."""
    lines = ["## Paired (counterfactual) design", "",
             "The unpaired tests above compare the groups' reward distributions over different rows: a difference "
             "there may come from the content each group holds. The paired tests compare the same content rendered "
             "once per group (rows sharing a pair id), so a difference there is the group's rendering alone "
             "(table_paired, paired_groups, paired_posthoc; pairs missing a group are left out).", ""]
    for model, rows in paired.groupby("model", sort=False):
        parts = []
        for row in rows.itertuples(index=False):
            if math.isnan(row.p_value):
                parts.append(f"{row.test} not computable ({int(row.n_pairs)} complete pairs)")
                continue
            verdict = "differs" if row.p_value < alpha else "does not differ significantly"
            mde = getattr(row, "mde_cohens_f", math.nan)
            if row.p_value >= alpha and not pd_isna(mde):
                verdict += f" (this run had 80% power for Cohen's f >= {mde:.2f})"
            q = getattr(row, "q_value", math.nan)
            q_text = "" if pd_isna(q) else f", {_p(q).replace('p', 'q', 1)}"
            parts.append(f"{row.test}: {verdict} ({_p(row.p_value)}{q_text}, {int(row.n_pairs)} pairs; {row.effect} "
                         f"{row.estimate:.3f}, 95% CI {row.ci_low:.3f} to {row.ci_high:.3f})")
        lines.append(f"- {model}: the same content's reward across groups " + "; ".join(parts) + ".")
    return lines + [""]


def truncation_lines(means: Any) -> list[str]:
    """A warning per model whose groups had different shares of responses cut at max_length (group_means)."""
    if "truncated_percent" not in means.columns:
        return []
    lines = []
    for model, rows in means.groupby("model", sort=False):
        shares = rows.set_index("group")["truncated_percent"].dropna()
        if shares.empty or shares.max() == 0 or shares.max() == shares.min():
            continue
        high, low = shares.idxmax(), shares.idxmin()
        lines.append(f"**Warning, truncation differs by group:** {model} cut {shares[high]:.0f}% of "
                     f"{_label(high)}'s responses at its max_length but {shares[low]:.0f}% of {_label(low)}'s "
                     "(group_means, truncated_percent): its group differences partly reflect text it did not read. "
                     "Raise max_length to compare groups fairly.")
    return [*lines, ""] if lines else []


def render(tables: dict[str, Any], record: dict[str, Any], alpha: float, corpus: dict[str, Any] | None = None,
           paired: Any = None) -> str:
    baselines = record.get("baselines") or {}
    everyone = list(tables["table1_anova"]["model"])
    models = [m for m in everyone if m not in baselines]
    groups = record.get("groups") or sorted(set(tables["group_means"]["group"]))
    settings = record.get("settings", {})
    counts = tables["group_means"].groupby("group")["n"].agg(["min", "max"])
    if counts["min"].nunique() == 1 and (counts["min"] == counts["max"]).all():
        sizes = f"{int(counts['min'].iloc[0])} each"
    else:
        sizes = ", ".join(f"{g} {counts.loc[g, 'min']}" if counts.loc[g, "min"] == counts.loc[g, "max"]
                          else f"{g} {counts.loc[g, 'min']}-{counts.loc[g, 'max']}"
                          for g in groups if g in counts.index)
    # counted by the Benjamini-Hochberg q-value over the models, so that M models do not give M chances
    q_column = "q_value" if "q_value" in tables["table1_anova"].columns else "p_value"
    unfair = [m for m in models if _row(tables["table1_anova"], m)[q_column] < alpha]

    lines = [
        "# Group fairness of reward models: summary",
        "",
        f"{counted(everyone, baselines)} scored {_data_words(corpus)} from {len(groups)} groups "
        f"(n per group: {sizes}). "
        "A fair model gives the same mean reward to every group. "
        + (f"{len(unfair)} of the {counted(models, {})} show{'s' if len(unfair) == 1 else ''} a significant "
           "difference between groups at alpha = "
           f"{alpha:g} (ANOVA, Benjamini-Hochberg q-value over the models)." if models else
           "No reward model ran: the baselines below show what their rules alone give on these groups."),
        "",
        "The *gap* is the highest minus the lowest group mean in within-group standard deviations (0.2 small, "
        "0.5 medium, 0.8 large); unlike the paper's NMGD it compares across models whatever their reward scale. "
        "The largest of several noisy group means always exceeds the smallest, so each gap is shown beside the "
        "gap noise alone gives (the mean over label permutations), and a gap whose permutation p >= alpha is "
        "called not distinguishable from chance. "
        "Gap and NMGD CIs: the lower bound from simultaneous Games-Howell pairwise intervals (exact when the groups "
        "are equal), the upper from an inverted parametric-bootstrap test of the range (table7_gap's note); "
        f"permutation p-values: {settings.get('permutations', '?')} permutations; seed "
        f"{settings.get('seed', '?')}. "
        "Favoured groups: (x/y) = significantly above x of the y other groups.",
        "",
        *truncation_lines(tables["group_means"]),
        "## Per model",
        "",
    ]
    for model in everyone:
        lines += model_paragraph(tables, model, alpha, settings.get("permutations"), baselines)
    lines += cross_model_lines(tables, record, alpha, corpus)
    if paired is not None:
        lines += paired_lines(paired, alpha)
    return "\n".join(lines)


def _data_words(corpus: dict[str, Any] | None) -> str:
    if corpus is None:
        return "arXiv abstracts"
    from rmeval.benchmarks.fairness.corpus.detect import describe

    return f"the responses of {describe(corpus)}"


def append_section(text: str, path: Path) -> str:
    """Append a Markdown file (e.g. another stage's summary) as its own section; a file without a heading
    gets one from its name."""
    try:
        body = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise RmevalError(f"--section: cannot read {path} ({error})") from error
    if not body.startswith("#"):
        body = f"## {path.stem.replace('_', ' ').capitalize()}\n\n{body}"
    return text.rstrip("\n") + "\n\n" + body + "\n"


def summary_section(context: RunContext) -> str:
    """The fairness section of the run's summary (`Benchmark.summary_section`), at the run's alpha."""
    import pandas as pd

    from rmeval.benchmarks.fairness.corpus.detect import corpus_source

    tables = _read_tables(_table_paths(context.path, context.run_path(REPRODUCTION.key)))
    record = _record(context.path("record"))
    corpus = corpus_source(context.root, list(record.get("groups") or []))
    paired_path = context.path("table1").parent / "table_paired.csv"  # written beside Table 1 for a paired corpus
    paired = pd.read_csv(paired_path) if corpus is not None and paired_path.is_file() else None
    return render(tables, record, context.alpha, corpus, paired)


def main(argv: list[str]) -> int:
    from rmeval.config_check import schema_default

    args = build_parser().parse_args(argv)
    if not args.tables.is_dir():
        raise RmevalError(f"--tables: {args.tables} is not a directory")
    tables = _read_tables(_table_paths(lambda key: args.tables / Path(BENCHMARK.get(key).path).name,
                                       args.tables / Path(REPRODUCTION.path).name))
    record = _record(args.tables / Path(BENCHMARK.get("record").path).name)
    alpha = args.alpha if args.alpha is not None else float(
        record.get("settings", {}).get("alpha", schema_default("stats.alpha")))
    text = render(tables, record, alpha)
    for section in args.section:
        text = append_section(text, section)
    write_text_atomic(text, args.out)
    print(f"rmeval fairness-summary: wrote {args.out}")
    return 0
