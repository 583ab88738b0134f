"""The paired design's tables (written by `rmeval fairness-stats --pairs DIR` beside the unpaired ones):
`table_paired` (model, test, statistic, p_value, n_pairs, effect, estimate, 95% CI), `paired_groups` (within-pair
difference per group against the pair mean, share of pairs won), `paired_posthoc` (paired t per two groups, Holm)
and `paired_differences` (each pair's within-pair differences, what the figure draws); each CSV, .md and .tex
except the long-form differences (CSV only)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.errors import RmevalError
from rmeval.tables import Column

if TYPE_CHECKING:
    from rmeval.benchmarks.fairness.stats.marks import Marks

STEMS = ("table_paired", "paired_groups", "paired_posthoc")
DIFFERENCES = "paired_differences"
EXTRA = {
    "test": Column("test", "Test", "text"),
    "statistic": Column("statistic", "Statistic", "fixed", 3),
    "n_pairs": Column("n_pairs", "Pairs", "int"),
    "incomplete_pairs": Column("incomplete_pairs", "Incomplete pairs", "int"),
    "effect": Column("effect", "Effect", "text"),
    "estimate": Column("estimate", "Estimate", "fixed", 3),
    "mean_difference": Column("mean_difference", "Mean within-pair diff.", "fixed", 3),
    "win_share": Column("win_share", "Share of pairs won", "fixed", 3),
    "t_statistic": Column("t_statistic", "t", "fixed", 2, "$t$"),
    "p_holm": Column("p_holm", "p (Holm)", "p", 0, "$p$ (Holm)"),
}


def pair_ids(data_dir: Path, groups: list[str]) -> dict[str, dict[str, str]]:
    import pandas as pd

    pairs = {}
    for group in groups:
        path = data_dir / f"{group}.parquet"
        if not path.is_file():
            raise RmevalError(f"--pairs: {path} is missing (written by `rmeval corpus-prepare`)")
        frame = pd.read_parquet(path, columns=None)
        if "pair" not in frame.columns:
            raise RmevalError(f"--pairs: {path} has no `pair` column (set corpus.columns.pair)")
        pairs[group] = dict(zip(frame["id"].astype(str), frame["pair"].astype(str), strict=True))
    return pairs


def _ids(path: Path) -> list[str]:
    """A score file's ids, in the order its rewards were loaded (stats.loading reads the same file)."""
    import pandas as pd

    frame = pd.read_parquet(path, columns=["id"]) if path.suffix == ".parquet" else pd.read_csv(path)
    return frame["id"].astype(str).tolist()


def paired_tables(scores: Any, pairs: dict[str, dict[str, str]], alpha: float, bootstrap: int,
                  seed: int) -> dict[str, Any]:
    """stem -> DataFrame, from a ScoreSet (rmeval.benchmarks.fairness.stats.loading) and the pair ids."""
    import pandas as pd

    from rmeval.benchmarks.fairness.corpus import paired
    from rmeval.multiplicity import bh_q_values

    tests, groups_rows, posthoc, points = [], [], [], []
    for model in scores.models:
        rewards = {g.group: dict(zip(_ids(g.source), g.rewards.tolist(), strict=True)) for g in model.groups}
        names = [g.group for g in model.groups]
        data = paired.paired_matrix(model.model, rewards, {g: pairs[g] for g in names}, names)
        tests += paired.tests(data, bootstrap, seed, alpha)
        groups_rows += paired.group_rows(data)
        posthoc += paired.posthoc_rows(data, alpha)
        points += paired.differences(data)
    for test in dict.fromkeys(row["test"] for row in tests):  # BH over the models, per test
        rows = [row for row in tests if row["test"] == test]
        for row, q in zip(rows, bh_q_values([row["p_value"] for row in rows]), strict=True):
            row["q_value"] = q
    return {
        "table_paired": pd.DataFrame(tests, columns=["model", "test", "statistic", "p_value", "q_value", "n_pairs",
                                                     "incomplete_pairs", "effect", "estimate", "ci_low", "ci_high",
                                                     "mde_cohens_f", "cohens_f"]),
        "paired_groups": pd.DataFrame(groups_rows, columns=["model", "group", "n_pairs", "mean_difference", "ci_low",
                                                            "ci_high", "win_share"]),
        "paired_posthoc": pd.DataFrame(posthoc, columns=["model", "group_a", "group_b", "n_pairs", "mean_diff",
                                                         "ci_low", "ci_high", "t_statistic", "p_value", "p_holm",
                                                         "reject"]),
        DIFFERENCES: pd.DataFrame(points, columns=["model", "group", "pair", "difference"]),
    }


def _notes(frames: dict[str, Any], alpha: float, bootstrap: int) -> dict[str, str]:
    tests = frames["table_paired"]
    incomplete = sorted({int(v) for v in tests["incomplete_pairs"]}) if len(tests) else [0]
    left_out = (f"{incomplete[0]} pair(s)" if len(incomplete) == 1 else
                f"{incomplete[0]}-{incomplete[-1]} pairs (by model)")
    common = f"Only pairs with a row in every group are tested; {left_out} missing a group left out."
    return {
        "table_paired": "Friedman's chi-square for three or more groups (effect Kendall's W, CI from the "
                        "noncentral chi-square, Steiger & Fouladi 1997, valid at W = 0); paired t (t interval) and Wilcoxon signed-rank (median difference, "
                        f"pair-bootstrap CI, B = {bootstrap}) for two. q: Benjamini-Hochberg over the models, per test. MDE: the smallest Cohen's "
                        f"f (group effects' SD / within-pair residual SD) the repeated-measures F test on these pairs "
                        f"detects with power 0.8 at alpha = {alpha:g}. {common}",
        "paired_groups": "Mean of (the group's reward - the mean reward of its pair), t interval; share of pairs "
                         f"in which the group scores highest (ties split evenly). {common}",
        "paired_posthoc": f"Paired t test for every two groups, Holm-corrected; significant at alpha = {alpha:g}. "
                          + common,
    }


CAPTIONS = {
    "table_paired": "Paired (counterfactual) design: is the same content rewarded equally in every group?",
    "paired_groups": "Paired design: within-pair difference per group and share of pairs won",
    "paired_posthoc": "Paired design: pairwise paired t tests, Holm-corrected",
}


def write_paired(scores: Any, data_dir: Path, out: Path, alpha: float, bootstrap: int, seed: int,
                 footnote: str, marks: Marks | None = None) -> list[Path]:
    """The paired design's tables; `marks`: the judges and baselines to mark (stats.marks), none by default."""
    from rmeval.benchmarks.fairness.stats.marks import Marks
    from rmeval.benchmarks.fairness.stats.tables import Table
    from rmeval.io.atomic import write_text_atomic
    from rmeval.tables import frame_csv

    frames = paired_tables(scores, pair_ids(data_dir, scores.groups), alpha, bootstrap, seed)
    notes = _notes(frames, alpha, bootstrap)
    written = []
    for stem in STEMS:
        table = Table(stem, CAPTIONS[stem], frames[stem], f"{notes[stem]} {footnote}".strip(), dict(EXTRA))
        written += (marks or Marks()).write(table, out)
    path = out / f"{DIFFERENCES}.csv"
    write_text_atomic(frame_csv(frames[DIFFERENCES]), path)
    return [*written, path]
