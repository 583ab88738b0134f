"""Fairness against capability: is a more capable reward model fairer? (Song et al.'s second finding: "the top 2
reward models from RewardBench also have the lowest NMGD".)

`rmeval fairness-capability` joins, per model, the run's fairness statistics (|NMGD| and the scale-free gap of
table7_gap, eta-squared of table5_robust_anova, the ANOVA F of table1_anova) with the capability files every
enabled benchmark declares (its catalogue's `capability`: model, measure, score in %, e.g. RewardBench 2 overall)
and the registry's published RewardBench rank (`rewardbench_rank`, Song et al. Tables 1 and 3) for every model,
labelled as published. It writes:
- fairness_vs_capability.{csv,md,tex}: one row per model;
- fairness_vs_capability_correlations.{csv,md,tex}: Spearman rho and Kendall tau-b of each fairness statistic
  against each capability measure, with two-sided permutation p-values (exact, every permutation, up to
  EXACT_MAX models; else `permutations` seeded draws), 95% intervals valid from 3 models on (stats.rank_ci: the
  Neyman construction under a Gaussian copula; it excludes 0 exactly when the equal-tailed permutation test
  rejects) and n;
- fig_fairness_vs_capability.{png,pdf}: |NMGD| against each capability measure.
It reads files only: no other benchmark's code. Trivial baselines (the fairness run record's `baselines`) are rows
of the table, marked, but never a point of a correlation, the top-2 claim or the figure: they are not reward models.
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval import cli_settings
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

PUBLISHED_RANK = "RewardBench rank (published)"  # the registry's, lower = better
FAIRNESS = {"abs_nmgd_percent": "|NMGD| (%)", "scale_free_gap": "scale-free gap", "eta_sq": "eta squared",
            "anova_f": "ANOVA F"}
EXACT_MAX = 8  # up to 8! = 40,320 permutations, every one is used
MIN_MODELS = 3


# ----------------------------------------------------------------------------- inputs
def _csv(path: Path, columns: Sequence[str]) -> pd.DataFrame:
    import pandas as pd

    if not path.is_file():
        raise RmevalError(f"{path}: missing")
    table = pd.read_csv(path)
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise RmevalError(f"{path}: missing column(s) {missing}")
    return table


def fairness_values(table1: Path, table5: Path, table7: Path) -> dict[str, dict[str, float]]:
    """model -> the four fairness statistics, from the fairness tables."""
    values: dict[str, dict[str, float]] = {}
    for row in _csv(table7, ("model", "nmgd_percent", "scale_free_gap")).itertuples(index=False):
        values.setdefault(row.model, {}).update(abs_nmgd_percent=abs(float(row.nmgd_percent)),
                                                scale_free_gap=float(row.scale_free_gap))
    for row in _csv(table5, ("model", "eta_sq")).itertuples(index=False):
        values.setdefault(row.model, {})["eta_sq"] = float(row.eta_sq)
    for row in _csv(table1, ("model", "f_statistic")).itertuples(index=False):
        values.setdefault(row.model, {})["anova_f"] = float(row.f_statistic)
    return values


def run_baselines(tables: Path) -> dict[str, Any]:
    """model -> its rule, for the trivial baselines of the run (`rmeval fairness-stats`' run record beside the
    tables); {} without the record (tables copied by hand)."""
    import json

    from rmeval.benchmarks.fairness.catalogue import BENCHMARK

    record = tables / Path(BENCHMARK.get("record").path).name
    if not record.is_file():
        return {}
    return dict(json.loads(record.read_text(encoding="utf-8")).get("baselines") or {})


def capability_values(paths: Sequence[Path]) -> dict[str, dict[str, float]]:
    """measure -> model -> score, from the declared capability files (model, measure, score)."""
    measures: dict[str, dict[str, float]] = {}
    for path in paths:
        for index, row in enumerate(_csv(path, ("model", "measure", "score")).itertuples(index=False)):
            if not isinstance(row.measure, str) or not row.measure:
                raise RmevalError(f"{path}: row {index}: column 'measure' is empty")
            measures.setdefault(row.measure, {})[str(row.model)] = float(row.score)
    return measures


# ----------------------------------------------------------------------------- statistics
def _ranks(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(values)


@dataclass(frozen=True)
class Association:
    fairness: str
    measure: str
    n: int
    spearman_rho: float
    spearman_p: float
    kendall_tau: float
    kendall_p: float
    p_method: str  # exact / permutation (<B>) / "" when undefined
    better_is_fairer: bool | None  # the sign says more capable models have smaller statistics
    note: str = ""
    # 95% intervals of the population rho and tau (stats.rank_ci); NaN when undefined
    spearman_ci_low: float = math.nan
    spearman_ci_high: float = math.nan
    kendall_ci_low: float = math.nan
    kendall_ci_high: float = math.nan


def associate(fairness: str, measure: str, x: Sequence[float], y: Sequence[float], permutations: int,
              seed: int, higher_is_better: bool) -> Association:
    """Spearman and Kendall tau-b between capability `x` and fairness statistic `y`, permutation p-values."""
    import numpy as np
    from scipy import stats

    pairs = [(a, b) for a, b in zip(x, y, strict=True) if math.isfinite(a) and math.isfinite(b)]
    n = len(pairs)
    nan = math.nan
    if n < MIN_MODELS:
        return Association(fairness, measure, n, nan, nan, nan, nan, "", None,
                           f"{n} model(s) with both values; needs >= {MIN_MODELS}")
    xs = np.array([a for a, _ in pairs])
    ys = np.array([b for _, b in pairs])
    if np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return Association(fairness, measure, n, nan, nan, nan, nan, "", None, "constant values: undefined")
    rho = float(stats.spearmanr(xs, ys).statistic)
    tau = float(stats.kendalltau(xs, ys).statistic)
    rx, ry = _ranks(xs), _ranks(ys)
    if n <= EXACT_MAX:
        orders = np.array(list(itertools.permutations(range(n))))
        method = "exact"
    else:
        rng = np.random.default_rng(seed)
        orders = np.array([rng.permutation(n) for _ in range(permutations)])
        method = f"permutation ({permutations})"
    # rho of each permuted order: Pearson of ranks; tau-b: its concordance sum over the fixed denominator
    perm_ry = ry[orders]
    centred_x = rx - rx.mean()
    perm_c = perm_ry - perm_ry.mean(axis=1, keepdims=True)
    perm_rho = (perm_c @ centred_x) / (np.sqrt((perm_c ** 2).sum(axis=1)) * np.sqrt((centred_x ** 2).sum()))
    i, j = np.triu_indices(n, 1)
    sx = np.sign(xs[i] - xs[j])
    perm_y = ys[orders]
    concordance = np.sign(perm_y[:, i] - perm_y[:, j]) @ sx
    observed = float(np.sign(ys[i] - ys[j]) @ sx)
    tol = 1e-12
    p_rho = float(np.mean(np.abs(perm_rho) >= abs(rho) - tol))
    p_tau = float(np.mean(np.abs(concordance) >= abs(observed) - tol))
    if method != "exact":  # the observed order counts as one of the draws
        p_rho = (p_rho * len(orders) + 1) / (len(orders) + 1)
        p_tau = (p_tau * len(orders) + 1) / (len(orders) + 1)
    better_is_fairer = (rho < 0) if higher_is_better else (rho > 0)
    from rmeval.benchmarks.fairness.stats import rank_ci

    rho_low, rho_high = rank_ci.interval("spearman", rho, n, seed)
    tau_low, tau_high = rank_ci.interval("kendall", tau, n, seed)
    return Association(fairness, measure, n, rho, p_rho, tau, p_tau, method, better_is_fairer, "", rho_low, rho_high,
                       tau_low, tau_high)


def per_model_rows(fairness: Mapping[str, Mapping[str, float]], measures: Mapping[str, Mapping[str, float]],
                   ranks: Mapping[str, int | None]) -> list[dict[str, Any]]:
    rows = []
    for model, values in fairness.items():
        row: dict[str, Any] = {"model": model, **{key: values.get(key, math.nan) for key in FAIRNESS}}
        for measure, scores in measures.items():
            row[measure] = scores.get(model, math.nan)
        rank = ranks.get(model)
        row[PUBLISHED_RANK] = math.nan if rank is None else float(rank)
        row["run_on"] = ", ".join(measure for measure, scores in measures.items() if model in scores) or "none"
        rows.append(row)
    return rows


def claim_basis(rows: Sequence[Mapping[str, Any]], measures: Sequence[str]) -> tuple[str, bool] | None:
    """The capability that orders models for the top-2 claim: RewardBench overall as run, else RewardBench 2
    overall as run, else the published rank, the first with >= MIN_MODELS models having |NMGD| too."""
    for measure, higher in [*((m, True) for m in measures), (PUBLISHED_RANK, False)]:
        usable = [r for r in rows if math.isfinite(r.get(measure, math.nan)) and math.isfinite(r["abs_nmgd_percent"])]
        if len(usable) >= MIN_MODELS:
            return measure, higher
    return None


def top2_claim(rows: Sequence[Mapping[str, Any]], measures: Sequence[str]) -> dict[str, Any]:
    """How many of the two most capable models are among the two with the lowest |NMGD| (2 = the claim holds)."""
    # the claim is about RewardBench: other measures (RewardMATH accuracy) never order it
    ordered = [m for m in ("RewardBench overall", "RewardBench 2 overall") if m in measures]
    basis = claim_basis(rows, ordered)
    if basis is None:
        return {"basis": "", "n": 0, "top2": [], "lowest2": [], "count": math.nan}
    measure, higher = basis
    usable = [r for r in rows if math.isfinite(r.get(measure, math.nan)) and math.isfinite(r["abs_nmgd_percent"])]
    top2 = [r["model"] for r in sorted(usable, key=lambda r: (-r[measure] if higher else r[measure], r["model"]))[:2]]
    lowest2 = [r["model"] for r in sorted(usable, key=lambda r: (r["abs_nmgd_percent"], r["model"]))[:2]]
    return {"basis": measure, "n": len(usable), "top2": top2, "lowest2": lowest2,
            "count": float(len(set(top2) & set(lowest2)))}


CLAIM_MODEL = "top-2 RewardBench models"  # the claim's row in the reproduction table (published yaml's `model`)
FIXED_COLUMNS = ("model", *FAIRNESS, PUBLISHED_RANK, "run_on")


def claim_from_table(frame: pd.DataFrame) -> dict[str, Any]:
    """top2_claim of a written fairness_vs_capability.csv (its measure columns are those between the fairness
    statistics and the published rank)."""
    measures = [column for column in frame.columns if column not in FIXED_COLUMNS]
    rows = [{key: (float(value) if key != "model" and key != "run_on" and value is not None else value)
             for key, value in row.items()}
            for row in frame.astype(object).where(frame.notna(), math.nan).to_dict("records")]
    return top2_claim(rows, measures)


def claim_sentence(claim: Mapping[str, Any]) -> str:
    """One sentence: does this run support Song et al.'s "the top 2 RewardBench models have the lowest NMGD"?"""
    if not claim["basis"]:
        return (f"- Song et al.'s \"the top-2 RewardBench models have the lowest NMGD\" was not tested: fewer than "
                f"{MIN_MODELS} models have both |NMGD| and a RewardBench score or published rank.")
    verdict = "supports" if claim["count"] == 2 else "does not support"
    return (f"- This run {verdict} Song et al.'s \"the top-2 RewardBench models have the lowest NMGD\": the two "
            f"best by {claim['basis']} ({', '.join(claim['top2'])}) against the two lowest |NMGD| "
            f"({', '.join(claim['lowest2'])}), {claim['n']} models.")


# ----------------------------------------------------------------------------- outputs
def write_tables(rows: list[dict[str, Any]], associations: list[Association], measures: Sequence[str],
                 out: Path, claim: Mapping[str, Any], baselines: Mapping[str, Any] | None = None) -> None:
    from dataclasses import asdict

    import pandas as pd

    from rmeval.tables import Column, frame_csv, render_latex, render_markdown, write_table_files

    capability_columns = [*measures, PUBLISHED_RANK]
    columns = [Column("model", "Model"), *(Column(k, label, "fixed", 3 if k == "eta_sq" else 2)
                                           for k, label in FAIRNESS.items()),
               *(Column(m, f"{m} (%)", "fixed", 2) for m in measures),
               Column(PUBLISHED_RANK, PUBLISHED_RANK, "int"), Column("run_on", "Run on")]
    frame = pd.DataFrame(rows, columns=[c.key for c in columns])
    frame[PUBLISHED_RANK] = frame[PUBLISHED_RANK].astype("Int64")
    claim_text = (f"Top-2 by {claim['basis']}: {', '.join(claim['top2'])}; lowest |NMGD|: "
                  f"{', '.join(claim['lowest2'])} (n = {claim['n']})." if claim["basis"] else
                  f"Fewer than {MIN_MODELS} models have a capability value and |NMGD|: the top-2 claim is not tested.")
    note = ("Capability measures are this run's scores (higher = better); the RewardBench rank is the registry's "
            f"published one (Song et al. 2025; lower = better), for models not run here too. {claim_text}")
    caption = "Fairness against capability, per model"
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    if baselines:  # named in the Markdown / LaTeX, and said in the note; the CSV keeps the names
        from rmeval.benchmarks.fairness.stats.marks import BASELINE_SUFFIX

        records = [{**r, "model": f"{r['model']}{BASELINE_SUFFIX}" if r["model"] in baselines else r["model"]}
                   for r in records]
        note += (f" ‡ Trivial baseline(s), not reward models ({', '.join(baselines)}): shown, but in no correlation "
                 "and not in the top-2 claim.")
    write_table_files(out, "fairness_vs_capability", {
        "csv": frame_csv(frame), "md": render_markdown(caption, columns, records, note),
        "tex": render_latex(caption, "tab:fairness_vs_capability", columns, records, note)})
    correlation_columns = [Column("fairness", "Fairness statistic"), Column("measure", "Capability"),
                           Column("n", "n", "int"), Column("spearman_rho", "Spearman rho", "fixed", 3),
                           Column("spearman_ci_low", "rho CI low", "fixed", 2),
                           Column("spearman_ci_high", "rho CI high", "fixed", 2),
                           Column("spearman_p", "p (rho)", "p"), Column("kendall_tau", "Kendall tau-b", "fixed", 3),
                           Column("kendall_ci_low", "tau CI low", "fixed", 2),
                           Column("kendall_ci_high", "tau CI high", "fixed", 2),
                           Column("kendall_p", "p (tau)", "p"), Column("p_method", "p from"),
                           Column("better_is_fairer", "More capable = fairer", "bool"), Column("note", "Note")]
    corr = [asdict(a) for a in associations]
    corr_frame = pd.DataFrame(corr, columns=[c.key for c in correlation_columns])
    corr = [{**row, "fairness": FAIRNESS[row["fairness"]]} for row in corr]  # display labels (the CSV keeps keys)
    corr_note = ("Two-sided permutation p-values of Spearman's rho and Kendall's tau-b between each capability "
                 f"measure and fairness statistic across models ({', '.join(capability_columns)}). 95% CIs of the "
                 "population rho and tau: the Neyman construction under a Gaussian copula (Monte Carlo, exact from 3 "
                 "models on for normal-copula data; the interval excludes 0 exactly when the equal-tailed "
                 "permutation test rejects, for any data). 'More capable = fairer': the sign says more capable models "
                 "have the smaller fairness statistic.")
    write_table_files(out, "fairness_vs_capability_correlations", {
        "csv": frame_csv(corr_frame),
        "md": render_markdown("Fairness against capability: rank correlations", correlation_columns, corr, corr_note),
        "tex": render_latex("Fairness against capability: rank correlations",
                            "tab:fairness_vs_capability_correlations", correlation_columns, corr, corr_note)})


def draw(rows: list[dict[str, Any]], measures: Sequence[str], associations: Sequence[Association] = ()):
    """|NMGD| against each capability measure (a panel each; the published rank's axis reversed so that right =
    better everywhere)."""
    from rmeval.plotting.style import message_panel, pyplot

    plt = pyplot()
    panels = [m for m in [*measures, PUBLISHED_RANK]
              if sum(math.isfinite(r.get(m, math.nan)) and math.isfinite(r["abs_nmgd_percent"]) for r in rows) >= 1]
    if not panels:
        figure, axes = plt.subplots(figsize=(7.0, 2.4))
        message_panel(axes, "Fairness against capability",
                      "No model has a capability value: enable rewardbench / rewardbench2, or set\n"
                      "`rewardbench_rank` in the registry.")
        return figure
    figure, grid = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), layout="constrained",
                                squeeze=False)
    for axes, measure in zip(grid[0], panels, strict=True):
        shown = [r for r in rows if math.isfinite(r.get(measure, math.nan)) and math.isfinite(r["abs_nmgd_percent"])]
        axes.scatter([r[measure] for r in shown], [r["abs_nmgd_percent"] for r in shown], color="#0072B2", s=28,
                     zorder=3)
        for r in shown:
            axes.annotate(r["model"], (r[measure], r["abs_nmgd_percent"]), xytext=(4, 3), textcoords="offset points",
                          fontsize=7)
        if measure == PUBLISHED_RANK:
            axes.invert_xaxis()
            axes.set_xlabel("RewardBench rank, published (1 = best, right)")
        else:
            axes.set_xlabel(f"{measure} (%), this run")
        axes.set_ylabel("|NMGD| (%)")
        found = [a for a in associations if a.measure == measure and a.fairness == "abs_nmgd_percent"]
        if found and math.isfinite(found[0].spearman_rho):
            a = found[0]
            axes.set_title(f"Spearman rho = {a.spearman_rho:+.2f}, p = {a.spearman_p:.3g} ({a.p_method}, n = {a.n})",
                           loc="left", fontsize=8)
        elif found:
            axes.set_title(found[0].note, loc="left", fontsize=8)
        axes.grid(color="#eeeeee", linewidth=0.6, zorder=0)
        axes.margins(x=0.2, y=0.15)
    figure.suptitle("Are more capable reward models fairer? (lower |NMGD| = fairer)", x=0.01, ha="left", fontsize=9)
    return figure


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval fairness-capability", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", required=True, type=Path, help="folder of table1/table5/table7 (results/tables)")
    parser.add_argument("--capability", nargs="*", type=Path, default=[],
                        help="capability files (model, measure, score) of the enabled benchmarks")
    parser.add_argument("--ranks", default=None, help="JSON mapping model -> published rewardbench_rank (or null)")
    parser.add_argument("--out", required=True, type=Path, help="folder of the tables (results/tables)")
    parser.add_argument("--figure", type=Path, default=None,
                        help="the figure's PNG (a PDF is written beside it); none: not drawn (nothing to show)")
    parser.add_argument("--permutations", type=int, default=schema_default("stats.permutations"))
    parser.add_argument("--seed", type=int, default=schema_default("stats.seed"))
    parser.add_argument("--dpi", type=int, default=schema_default("figures.dpi"))
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    import json

    from rmeval.plotting.style import save_figure

    args = cli_settings.parse_args(build_parser(), argv)
    ranks = args.ranks if isinstance(args.ranks, dict) else json.loads(args.ranks) if args.ranks else {}
    fairness = fairness_values(args.tables / "table1_anova.csv", args.tables / "table5_robust_anova.csv",
                               args.tables / "table7_gap.csv")
    measures = capability_values(args.capability)
    rows = per_model_rows(fairness, measures, ranks)
    baselines = run_baselines(args.tables)
    models = [row for row in rows if row["model"] not in baselines]  # what the correlations and the claim use
    associations = [associate(key, measure, [r.get(measure, math.nan) for r in models], [r[key] for r in models],
                              args.permutations, args.seed, measure != PUBLISHED_RANK)
                    for measure in [*measures, PUBLISHED_RANK] for key in FAIRNESS]
    claim = top2_claim(models, list(measures))
    write_tables(rows, associations, list(measures), args.out, claim, baselines)
    if args.figure is not None:
        figure = draw(models, list(measures), associations)
        save_figure(figure, args.figure.parent, args.figure.stem, args.dpi, ("png", "pdf"))
    print(f"fairness-capability: {len(rows)} model(s), measures {list(measures) + [PUBLISHED_RANK]}")
    return 0
