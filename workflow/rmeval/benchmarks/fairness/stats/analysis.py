"""Run every fairness statistic on a loaded ScoreSet and lay the results out as tables.

Everything is computed before anything is written, so an error leaves no partial output.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rmeval.benchmarks.fairness.catalogue import BENCHMARK, STATS_RULE
from rmeval.benchmarks.fairness.stats import gaps, length, oneway, posthoc
from rmeval.benchmarks.fairness.stats.loading import ModelScores, ScoreSet
from rmeval.benchmarks.fairness.stats.tables import Table
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.benchmarks.catalogue import Output
    from rmeval.models.baseline import BaselineRule

# The paper's reference model: the config's default `reference_model`. Known even when the registry lacks it.
PAPER_REFERENCE_MODEL: str = schema_default("reference_model")


@dataclass(frozen=True)
class StatsSettings:
    """The config's `stats:` section and `reference_model`, defaults from the schema (fairness-stats' record)."""

    alpha: float = schema_default("stats.alpha")
    bootstrap: int = schema_default("stats.bootstrap")
    permutations: int = schema_default("stats.permutations")
    seed: int = schema_default("stats.seed")
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
    # Per group (run order): the share of its rows cut at max_length, None when the score files do not say.
    truncated_shares: list[float | None] = field(default_factory=list)
    note: str = ""  # what this model's rewards leave undefined, and why (oneway.undefined_note); "" if nothing
    # percentile interval of the Tukey significant-pair count over a stratified bootstrap (the reproduction verdict)
    tukey_count_interval: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def truncation_differs(self) -> bool:
        """Some group's rows were cut at max_length, and not every group's share is the same."""
        shares = [share for share in self.truncated_shares if share is not None]
        return bool(shares) and max(shares) > 0 and max(shares) != min(shares)

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
    # the trivial baselines among the models (their score sidecars say so) and their rules: marked in the tables,
    # a multiplicity family of their own
    baselines: dict[str, BaselineRule] = field(default_factory=dict)


def analyse_model(scores: ModelScores, settings: StatsSettings) -> ModelResult:
    groups = scores.group_names
    samples = [g.rewards for g in scores.groups]
    length_result, length_note = None, ""
    if scores.has_lengths:
        rewards, labels = scores.labelled()
        n_tokens = np.concatenate([g.n_tokens for g in scores.groups])
        try:
            length_result = length.ancova(scores.model, rewards, labels, n_tokens, len(groups))
        except (RmevalError, ValueError, np.linalg.LinAlgError) as error:  # must not hide the other statistics
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
        gap=gaps.gap_analysis(scores.model, groups, samples, settings.permutations, settings.seed),
        length=length_result,
        length_note=length_note,
        truncated_shares=[g.truncated_share for g in scores.groups],
        note=oneway.undefined_note(groups, samples),
        tukey_count_interval=posthoc.tukey_count_interval(samples, settings.alpha, settings.bootstrap,
                                                          gaps.model_rngs(settings.seed, scores.model)[0]),
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


def analyse(scores: ScoreSet, settings: StatsSettings, ranks: dict[str, int | None],
            baselines: dict[str, BaselineRule] | None = None) -> Analysis:
    results = [analyse_model(model_scores, settings) for model_scores in scores.models]
    return Analysis(settings=settings, groups=scores.groups, results=results, ranks=ranks, notes=list(scores.notes),
                    baselines=dict(baselines or {}))


# ---------------------------------------------------------------- tables


@dataclass(frozen=True)
class TableContext:
    """What every builder reads: the analysis, and Table 4's reference model (None, with the reason, if skipped)."""

    analysis: Analysis
    reference: str | None
    table4_note: str
    # model -> Cohen's f of the paper's one-way ANOVA (its F and dfs); empty for a corpus run or without the file
    paper_effects: dict[str, float] = field(default_factory=dict)


def build_tables(analysis: Analysis, reference: str | None, table4_note: str, footnote: str,
                 paper_effects: dict[str, float]) -> list[tuple[Output, Table]]:
    """Every table of rule `fairness_stats` in the catalogue, each from its builder (stats/builders.py), with
    the run's footnote (data source, n per group) after the table's own note."""
    context = TableContext(analysis, reference, table4_note, paper_effects)
    tables = []
    for output in BENCHMARK.of_rule(STATS_RULE):
        if output.builder is None:  # the run record and provenance: written by the CLI itself
            continue
        draft = output.build()(context)
        tables.append((output, Table(output.stem, draft.caption, draft.frame, f"{draft.note} {footnote}".strip(),
                                     draft.extra_columns)))
    return tables


def run_record(analysis: Analysis, reference: str | None, notes: list[str], scores_dir: Path) -> dict[str, Any]:
    """What `fairness-summary` and a reader need to know about the run besides the tables."""
    return {
        "scores": str(scores_dir),
        "models": [r.model for r in analysis.results],
        "groups": analysis.groups,
        "settings": asdict(analysis.settings),
        "reference_model_used": reference,
        # model -> its rule, for the trivial baselines among the models (what the summary names as baselines)
        "baselines": {model: {"kind": rule.kind, "revision": rule.revision, "rule": rule.words}
                      for model, rule in analysis.baselines.items()},
        "notes": notes + [f"{r.model}: {r.note}" for r in analysis.results if r.note]
        + [f"{r.model}: {r.length_note}" for r in analysis.results if r.length_note],
    }
