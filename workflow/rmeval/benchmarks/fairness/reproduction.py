"""The fairness benchmark's rows of the run's reproduction table (rmeval.run_outputs.reproduction).

Reads our Tables 1-4 (`table1_anova.csv`, `table2_tukey.csv`, `table3_nmgd.csv`, `table4_pearson.csv`: the
catalogue's `reproduction_inputs`) and Song et al.'s published values (`resources/published/song2025_fairness.yaml`,
the catalogue's `published`), and compares them per model and statistic.

Verdicts are read from our intervals and our power (`rules`, also written into every CSV row and the table note);
each is one of same conclusion, differs, inconclusive (this run could not have told) and not comparable:
- ANOVA F and p: same conclusion when the test is significant at the run's alpha in both or in neither; the paper
  significant and ours not: differs only when our power to detect the paper's effect (power.csv) is >= 0.8, else
  inconclusive; ours significant and the paper's not: differs.
- Tukey significant pairs: our count's 95% interval (table2_tukey, a stratified bootstrap of the count) holds the
  paper's count: same conclusion; our interval lies below it and our power at the paper's effect is < 0.8:
  inconclusive; otherwise differs. Not comparable unless both count over the same number of pairs (28).
- NMGD (%): our 95% CI (table7_gap) holds the paper's value and excludes 0: same conclusion; holds both the paper's
  value and 0 (no gap, the opposite conclusion; an unbounded CI holds everything): inconclusive; excludes the
  paper's value: differs.
- Pearson r: the same rule on our Fisher-z 95% CI (table4_pearson), 0 being no agreement with the reference.
- The claim "the top-2 RewardBench models have the lowest NMGD" (row `top-2 RewardBench models`, from
  fairness_vs_capability.csv): how many of the run's two most capable models are among its two lowest |NMGD|; the
  same conclusion when both (the paper's 2), not comparable with fewer than three models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.fairness.catalogue import made_by
from rmeval.errors import RmevalError
from rmeval.run_outputs.comparison import (
    DIFFERS,
    INCONCLUSIVE,
    NOT_COMPARABLE,
    SAME,
    SCALAR,
    Comparison,
    Published,
    ReproductionPart,
    Statistic,
    load_published,
)

if TYPE_CHECKING:
    from rmeval.run_outputs.context import RunContext

TARGET_POWER = 0.8  # the power below which a missed effect is "could not have told", not "differs"
FULL_PAIRS = 28  # the paper's 8 groups
STATISTICS: dict[str, str] = {  # key -> label shown in the tables
    "anova_f": "ANOVA F",
    "anova_p": "ANOVA p",
    "tukey_significant_pairs": "Tukey significant pairs",
    "nmgd_percent": "NMGD (%)",
    "pearson_r": "Pearson r",
    "top2_lowest_abs_nmgd": "Top-2 RewardBench models among the 2 lowest |NMGD|",
}
DECIMALS = {"anova_f": 2, "anova_p": None, "tukey_significant_pairs": 0, "nmgd_percent": 2, "pearson_r": 3,
            "top2_lowest_abs_nmgd": 0}


def rules(alpha: float) -> dict[str, str]:
    significance = (f"significant at alpha = {alpha:g} in both or in neither; the paper's significant and ours not: "
                    f"differs if our power at the paper's effect >= {TARGET_POWER:g}, else inconclusive")
    interval = ("the paper's value in our 95% CI and 0 outside it; in it with 0 (both conclusions possible): "
                "inconclusive; outside it: differs")
    return {
        "anova_f": significance + " (the F test's p decides)",
        "anova_p": significance,
        "tukey_significant_pairs": ("the paper's count in our count's 95% bootstrap interval, over the same number of "
                                    f"pairs; below it with power < {TARGET_POWER:g}: inconclusive; else differs"),
        "nmgd_percent": interval + " (0 = no gap)",
        "pearson_r": interval + " (Fisher z; 0 = no agreement)",
        "top2_lowest_abs_nmgd": "both of the two most capable models (the run's RewardBench overall, else RewardBench "
                                "2 overall, else the published rank) have the two lowest |NMGD|; >= 3 models",
    }


def statistics(alpha: float) -> dict[str, Statistic]:
    texts = rules(alpha)
    return {key: Statistic(key, label, texts[key], DECIMALS[key]) for key, label in STATISTICS.items()}


def paper_effects(paths: Sequence[Path]) -> dict[str, float]:
    """model -> Cohen's f of the paper's one-way ANOVA (Table 1's F at the file's `anova_df`)."""
    import yaml

    from rmeval.benchmarks.fairness.stats.power import cohens_f_from_anova

    effects: dict[str, float] = {}
    for path in paths:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        df = document.get("anova_df")
        if df is None:
            continue
        if not (isinstance(df, list) and len(df) == 2 and all(isinstance(v, int) and v > 0 for v in df)):
            raise RmevalError(f"{path}: anova_df must be [df_between, df_within], got {df!r}")
        published = load_published([path], STATISTICS)
        for (model, aggregation, statistic), value in published.values.items():
            if statistic == "anova_f" and aggregation == SCALAR:
                effects[model] = cohens_f_from_anova(value.value, df[0], df[1])
    return effects


def _read(path: Path):
    import pandas as pd

    if not path.exists():
        raise RmevalError(f"{path} is missing; run `{made_by(path.name)}` first")
    return pd.read_csv(path)


def _nan(value: Any) -> float:
    return float("nan") if value is None else float(value)


def our_values(tables: Mapping[str, Path]) -> tuple[dict[tuple[str, str, str], float], dict[str, Any]]:
    """(model, aggregation, statistic) -> our value, plus what the verdicts read: p-values, pair totals, our
    intervals ((model, statistic) -> (low, high)) and power at the paper's effect. `tables`: catalogue key
    (table1 ... table4, table7, power) -> file; Table 4 may be absent (no reference model), power too (older runs)."""
    ours: dict[tuple[str, str, str], float] = {}
    facts: dict[str, Any] = {"p": {}, "total_pairs": {}, "interval": {}, "power": {}}
    for row in _read(tables["table1"]).itertuples(index=False):
        ours[(row.model, SCALAR, "anova_f")] = float(row.f_statistic)
        ours[(row.model, SCALAR, "anova_p")] = float(row.p_value)
        facts["p"][row.model] = float(row.p_value)
    for row in _read(tables["table2"]).to_dict("records"):
        ours[(row["model"], SCALAR, "tukey_significant_pairs")] = float(row["significant_pairs"])
        facts["total_pairs"][row["model"]] = int(row["total_pairs"])
        facts["interval"][(row["model"], "tukey_significant_pairs")] = (_nan(row.get("pairs_ci_low")),
                                                                        _nan(row.get("pairs_ci_high")))
    for row in _read(tables["table3"]).itertuples(index=False):
        ours[(row.model, SCALAR, "nmgd_percent")] = float(row.nmgd_percent)
    if "table7" in tables and tables["table7"].exists():
        for row in _read(tables["table7"]).itertuples(index=False):
            facts["interval"][(row.model, "nmgd_percent")] = (float(row.nmgd_ci_low), float(row.nmgd_ci_high))
    if tables["table4"].exists():
        for row in _read(tables["table4"]).to_dict("records"):
            ours[(row["model"], SCALAR, "pearson_r")] = float(row["pearson_r"])
            facts["interval"][(row["model"], "pearson_r")] = (_nan(row.get("ci_low")), _nan(row.get("ci_high")))
    if "power" in tables and tables["power"].exists():
        for row in _read(tables["power"]).itertuples(index=False):
            if row.test == "anova":
                facts["power"][row.model] = float(row.power_at_paper_effect)
    if "capability" in tables and tables["capability"].exists():
        from rmeval.benchmarks.fairness.capability import CLAIM_MODEL, claim_from_table

        ours[(CLAIM_MODEL, SCALAR, "top2_lowest_abs_nmgd")] = claim_from_table(_read(tables["capability"]))["count"]
    return ours, facts


def interval_verdict(paper: float, low: float, high: float) -> str:
    """The paper's value against our interval, 0 standing for the opposite conclusion (no gap, no agreement)."""
    if math.isnan(low) or math.isnan(high):
        return NOT_COMPARABLE
    if not low <= paper <= high:
        return DIFFERS
    return INCONCLUSIVE if low <= 0.0 <= high else SAME


def verdict(statistic: str, model: str, ours: float, paper: Published, facts: dict[str, Any], alpha: float,
            paper_p: Published | None) -> str:
    power = facts["power"].get(model, float("nan"))
    powered = power >= TARGET_POWER  # NaN (no paper effect or no power table): not powered
    if statistic in {"anova_f", "anova_p"}:
        if paper_p is None or math.isnan(facts["p"][model]):
            return NOT_COMPARABLE
        ours_significant = facts["p"][model] < alpha
        paper_significant = paper_p.value < alpha or (paper_p.upper_bound and paper_p.value <= alpha)
        if ours_significant == paper_significant:
            return SAME
        return DIFFERS if ours_significant or powered else INCONCLUSIVE
    if statistic == "tukey_significant_pairs":
        low, high = facts["interval"].get((model, statistic), (float("nan"), float("nan")))
        if facts["total_pairs"].get(model) != FULL_PAIRS or math.isnan(low):
            return NOT_COMPARABLE
        if low <= paper.value <= high:
            return SAME
        return INCONCLUSIVE if high < paper.value and not powered else DIFFERS
    if statistic in {"nmgd_percent", "pearson_r"}:
        if math.isnan(ours):
            return NOT_COMPARABLE
        return interval_verdict(paper.value, *facts["interval"].get((model, statistic), (math.nan, math.nan)))
    if statistic == "top2_lowest_abs_nmgd":
        if math.isnan(ours):
            return NOT_COMPARABLE
        return SAME if ours == paper.value else DIFFERS
    raise KeyError(f"fairness compares no statistic {statistic!r}")


def _corpus_run(context: RunContext) -> bool:
    import json

    from rmeval.benchmarks.fairness.corpus.detect import corpus_source

    record = context.path("record")
    groups = json.loads(record.read_text(encoding="utf-8")).get("groups", []) if record.is_file() else []
    return corpus_source(context.root, list(groups)) is not None


def reproduction_part(context: RunContext) -> ReproductionPart:
    """Our Tables 1-4 beside the paper's values (`Benchmark.reproduction`); none for a grouped corpus (its note
    says not applicable)."""
    published = load_published(context.published, STATISTICS)
    ours, facts = our_values({key: context.path(key) for key in context.benchmark.reproduction_inputs})
    shown = statistics(context.alpha)
    if _corpus_run(context):
        from rmeval.benchmarks.fairness.corpus.detect import NOT_APPLICABLE

        models = tuple(dict.fromkeys(model for model, _, _ in ours))
        return ReproductionPart(tuple(shown.values()), (), models, frozenset(models), published.papers,
                                (NOT_APPLICABLE,))
    comparisons = []
    for (model, aggregation, statistic), value in ours.items():
        paper = published.values.get((model, aggregation, statistic))
        if paper is None:
            continue
        low, high = facts["interval"].get((model, statistic), (None, None))
        reads_power = statistic in {"anova_f", "anova_p", "tukey_significant_pairs"}
        comparisons.append(Comparison(
            model, aggregation, shown[statistic], value, paper,
            verdict(statistic, model, value, paper, facts, context.alpha,
                    published.values.get((model, SCALAR, "anova_p"))),
            published.where_printed.get(statistic, ""), low, high,
            facts["power"].get(model) if reads_power else None))
    models = tuple(dict.fromkeys(model for model, _, _ in ours))
    return ReproductionPart(tuple(shown.values()), tuple(comparisons), models, published.models, published.papers)
