"""The fairness benchmark's rows of the run's reproduction table (rmeval.run_outputs.reproduction).

Reads our Tables 1-4 (`table1_anova.csv`, `table2_tukey.csv`, `table3_nmgd.csv`, `table4_pearson.csv`: the
catalogue's `reproduction_inputs`) and Song et al.'s published values (`resources/published/song2025_fairness.yaml`,
the catalogue's `published`), and compares them per model and statistic.

Verdict rules (`rules`, also written into every CSV row and the table note):
- ANOVA F and p: same conclusion when the test is significant at the run's alpha in both or in neither (F has no
  verdict of its own: with n per group it grows without bound, so only its significance is comparable).
- Tukey significant pairs: same conclusion within +-`TUKEY_TOLERANCE` pairs (2), and only when both count over
  the same number of pairs (28 for 8 groups); otherwise not comparable.
- NMGD (%): same sign and the same magnitude band (|NMGD| < 20, 20-100, >= 100).
- Pearson r: same sign and the same strength band (|r| < 0.3 weak, 0.3-0.7 moderate, >= 0.7 strong).
- The claim "the top-2 RewardBench models have the lowest NMGD" (row `top-2 RewardBench models`, from
  fairness_vs_capability.csv): how many of the run's two most capable models are among its two lowest |NMGD|; the
  same conclusion when both (the paper's 2), not comparable with fewer than three models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError
from rmeval.run_outputs.comparison import (
    DIFFERS,
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

NMGD_BANDS = (20.0, 100.0)
R_BANDS = (0.3, 0.7)
TUKEY_TOLERANCE = 2  # pairs within which two Tukey counts agree
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


def rules(alpha: float, tukey_tolerance: int = TUKEY_TOLERANCE) -> dict[str, str]:
    significance = f"significant at alpha = {alpha:g} in both or in neither"
    return {
        "anova_f": significance + " (the F test's p decides)",
        "anova_p": significance,
        "tukey_significant_pairs": f"within +-{tukey_tolerance} pairs, counted over the same number of pairs",
        "nmgd_percent": "same sign and the same |NMGD| band (< 20, 20-100, >= 100)",
        "pearson_r": "same sign and the same |r| band (< 0.3 weak, 0.3-0.7 moderate, >= 0.7 strong)",
        "top2_lowest_abs_nmgd": "both of the two most capable models (the run's RewardBench overall, else RewardBench "
                                "2 overall, else the published rank) have the two lowest |NMGD|; >= 3 models",
    }


def statistics(alpha: float, tukey_tolerance: int = TUKEY_TOLERANCE) -> dict[str, Statistic]:
    texts = rules(alpha, tukey_tolerance)
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
        raise RmevalError(f"{path} is missing; run `rmeval fairness-stats` first")
    return pd.read_csv(path)


def our_values(tables: Mapping[str, Path]) -> tuple[dict[tuple[str, str, str], float], dict[str, Any]]:
    """(model, aggregation, statistic) -> our value, plus facts the verdicts need (p-values, pair totals).
    `tables`: catalogue key (table1 ... table4) -> file; Table 4 may be absent (no reference model)."""
    ours: dict[tuple[str, str, str], float] = {}
    facts: dict[str, Any] = {"p": {}, "total_pairs": {}}
    for row in _read(tables["table1"]).itertuples(index=False):
        ours[(row.model, SCALAR, "anova_f")] = float(row.f_statistic)
        ours[(row.model, SCALAR, "anova_p")] = float(row.p_value)
        facts["p"][row.model] = float(row.p_value)
    for row in _read(tables["table2"]).itertuples(index=False):
        ours[(row.model, SCALAR, "tukey_significant_pairs")] = float(row.significant_pairs)
        facts["total_pairs"][row.model] = int(row.total_pairs)
    for row in _read(tables["table3"]).itertuples(index=False):
        ours[(row.model, SCALAR, "nmgd_percent")] = float(row.nmgd_percent)
    if tables["table4"].exists():
        for row in _read(tables["table4"]).itertuples(index=False):
            ours[(row.model, SCALAR, "pearson_r")] = float(row.pearson_r)
    if "capability" in tables and tables["capability"].exists():
        from rmeval.benchmarks.fairness.capability import CLAIM_MODEL, claim_from_table

        ours[(CLAIM_MODEL, SCALAR, "top2_lowest_abs_nmgd")] = claim_from_table(_read(tables["capability"]))["count"]
    return ours, facts


def _band(value: float, bands: tuple[float, float]) -> int:
    magnitude = abs(value)
    return 0 if magnitude < bands[0] else 1 if magnitude < bands[1] else 2


def verdict(statistic: str, model: str, ours: float, paper: Published, facts: dict[str, Any], alpha: float,
            paper_p: Published | None, tukey_tolerance: int = TUKEY_TOLERANCE) -> str:
    if statistic in {"anova_f", "anova_p"}:
        if paper_p is None:
            return NOT_COMPARABLE
        ours_significant = facts["p"][model] < alpha
        paper_significant = paper_p.value < alpha or (paper_p.upper_bound and paper_p.value <= alpha)
        return SAME if ours_significant == paper_significant else DIFFERS
    if statistic == "tukey_significant_pairs":
        if facts["total_pairs"].get(model) != FULL_PAIRS:
            return NOT_COMPARABLE
        return SAME if abs(ours - paper.value) <= tukey_tolerance else DIFFERS
    if statistic == "nmgd_percent":
        same = math.copysign(1, ours) == math.copysign(1, paper.value) and _band(ours, NMGD_BANDS) == _band(
            paper.value, NMGD_BANDS)
        return SAME if same else DIFFERS
    if statistic == "pearson_r":
        if math.isnan(ours):
            return NOT_COMPARABLE
        same = math.copysign(1, ours) == math.copysign(1, paper.value) and _band(ours, R_BANDS) == _band(
            paper.value, R_BANDS)
        return SAME if same else DIFFERS
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
        comparisons.append(Comparison(
            model, aggregation, shown[statistic], value, paper,
            verdict(statistic, model, value, paper, facts, context.alpha,
                    published.values.get((model, SCALAR, "anova_p"))),
            published.where_printed.get(statistic, "")))
    models = tuple(dict.fromkeys(model for model, _, _ in ours))
    return ReproductionPart(tuple(shown.values()), tuple(comparisons), models, published.models, published.papers)
