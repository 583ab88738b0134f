"""`rmeval fairness-calibrate`: per model, shuffle the group labels R times (the null) and plant known shifts (the
run's minimum detectable effect, the paper's NMGD for that model), rerun the omnibus tests and the gap's CI, and
write results/tables/calibration.{csv,md,tex}: each test's rejection rate beside its analytic power, and the CI's
coverage of the planted gap (rmeval.benchmarks.fairness.stats.calibration)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval import cli_settings
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.benchmarks.fairness.stats.marks import Marks

COLUMNS = ["model", "test", "scenario", "n", "groups", "planted_effect", "planted_gap", "replicates", "rejection_rate", "ci_low",
           "ci_high", "analytic_power", "coverage", "note"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval fairness-calibrate", description=__doc__)
    parser.add_argument("--scores", required=True, type=Path, help="folder of {model}/{group}.parquet|.csv")
    parser.add_argument("--out", required=True, type=Path, help="folder for calibration.{csv,md,tex}")
    parser.add_argument("--models", nargs="+", default=None, help="only these model folders, in this order")
    parser.add_argument("--groups", nargs="+", default=None, help="only these groups, in this order")
    parser.add_argument("--replicates", type=int, default=schema_default("stats.calibration.replicates"),
                        help="label shuffles per planted effect (default: %(default)s)")
    parser.add_argument("--alpha", type=float, default=schema_default("stats.alpha"),
                        help="the level the tests reject at (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=schema_default("stats.seed"),
                        help="seed of the shuffles (per model; default: %(default)s)")
    parser.add_argument("--corpus", action="store_true",
                        help="a grouped corpus: no paper NMGD to plant (Song et al.'s values are for arXiv groups)")
    cli_settings.add_settings_argument(parser)
    return parser


def _paper_nmgd() -> dict[str, float]:
    from rmeval.benchmarks.fairness.catalogue import BENCHMARK
    from rmeval.benchmarks.fairness.reproduction import STATISTICS
    from rmeval.run_outputs.comparison import SCALAR, load_published
    from rmeval.run_outputs.context import REPOSITORY

    published = load_published([REPOSITORY / path for path in BENCHMARK.published], STATISTICS)
    return {model: value.value for (model, aggregation, statistic), value in published.values.items()
            if statistic == "nmgd_percent" and aggregation == SCALAR}


def calibration_rows(scores: Any, replicates: int, alpha: float, seed: int,
                     paper_nmgd: dict[str, float]) -> list[dict[str, object]]:
    from rmeval.benchmarks.fairness.stats import calibration, gaps, oneway

    rows: list[dict[str, object]] = []
    for model in scores.models:
        samples = [g.rewards for g in model.groups]
        undefined = oneway.undefined_note(model.group_names, samples)
        if undefined:  # Welch or the gap CI undefined: nothing to calibrate
            rows += [{"model": model.model, "test": test, "replicates": 0, "note": undefined}
                     for test in calibration.TESTS]
            continue
        rng = gaps.model_rngs(seed, model.model)[2]
        draws = gaps.interval_draws(seed, model.model, len(samples))
        for row in calibration.calibrate_model(model.model, samples, replicates, alpha,
                                               paper_nmgd.get(model.model), rng, draws):
            rows.append({**row, "note": ""})
    return rows


def write_calibration(scores: Any, out: Path, replicates: int, alpha: float, seed: int,
                      paper_nmgd: dict[str, float], marks: Marks | None = None) -> list[Path]:
    """calibration.{csv,md,tex} (the catalogue's builder of `calibration`); `marks`: the judges and baselines to mark
    (stats.marks), none by default."""
    import pandas as pd

    from rmeval.benchmarks.fairness.stats.marks import Marks
    from rmeval.benchmarks.fairness.stats.tables import Table

    frame = pd.DataFrame(calibration_rows(scores, replicates, alpha, seed, paper_nmgd), columns=COLUMNS)
    for column in ("n", "groups", "replicates"):
        frame[column] = frame[column].astype("Int64")
    note = (f"Per model, its rewards with shuffled group labels (shuffled: the null, planted effect 0), and with a "
            f"shift added to the first group ({scores.groups[0]}) at the run's minimum detectable effect (mde) and at "
            f"the paper's NMGD for that model (paper_nmgd); {replicates} shuffles each, seed {seed}. Planted effect: "
            f"Cohen's f. Rejection rate at alpha = {alpha:g}, 95% Clopper-Pearson interval; analytic power: the "
            "noncentral F (power.csv's); coverage: share of the scale-free gap's 95% CIs holding the planted gap "
            "(shift / reward SD).")
    table = Table("calibration", "Calibration on this run's rewards: test size, power and CI coverage", frame, note)
    return (marks or Marks()).write(table, out)


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    if args.replicates < 20:
        raise RmevalError(f"--replicates: {args.replicates} is too few for a rejection rate; use >= 20")
    if not 0.0 < args.alpha < 1.0:
        raise RmevalError(f"--alpha: {args.alpha} is not in (0, 1)")
    from rmeval.benchmarks.fairness.stats.loading import load_scores

    scores = load_scores(args.scores, models=args.models, groups=args.groups)
    from rmeval.benchmarks.fairness.stats.marks import Marks

    write_calibration(scores, args.out, args.replicates, args.alpha, args.seed, {} if args.corpus else _paper_nmgd(),
                      Marks.of(Path(args.scores), scores.model_names))
    print(f"rmeval fairness-calibrate: {len(scores.models)} model(s), {args.replicates} replicates per effect; wrote "
          f"{args.out / 'calibration.csv'}", file=sys.stderr)
    return 0
