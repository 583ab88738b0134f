"""`rmeval judgebench-metrics`: every model's score files on every split -> results/tables/judgebench.*,
judgebench_subsets.*, judgebench_capability.csv and the per-pair results (results/judgebench/pairs.csv), models in
config order, splits in config order."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rmeval import cli_settings

if TYPE_CHECKING:
    from rmeval.benchmarks.judgebench.metrics import Outcomes


def build_parser() -> argparse.ArgumentParser:
    from rmeval.config_check import schema_default

    parser = argparse.ArgumentParser(prog="rmeval judgebench-metrics", description=__doc__)
    parser.add_argument("--data", required=True, help="the prepared folder (data/<split>.parquet, pairwise/...)")
    parser.add_argument("--scores", required=True, help="folder of {model}/<split>.parquet")
    parser.add_argument("--scored-models", nargs="*", default=[],
                        help="the scored models' names, in table order (not model entries)")
    parser.add_argument("--splits", nargs="+", default=schema_default("judgebench.splits"))
    parser.add_argument("--out", required=True, help="folder of the tables (results/tables)")
    parser.add_argument("--pairs", required=True, help="the per-pair CSV")
    cli_settings.add_settings_argument(parser)
    return parser


def read_outcomes(data_dir: Path, scores_dir: Path, models: list[str], splits: list[str]) -> list[Outcomes]:
    """Each (model, split)'s outcomes, split-major: the table the model's score job read is the one its score file
    fits (verdicts: the pairwise table)."""
    import pandas as pd

    from rmeval.benchmarks.judgebench.metrics import PAIRWISE_JUDGE, outcomes, score_mode
    from rmeval.errors import RmevalError

    found = []
    for split in splits:
        tables = {}
        for model in models:
            path = scores_dir / model / f"{split}.parquet"
            if not path.is_file():
                raise RmevalError(f"{path}: score file not found (model {model!r}, split {split!r})")
            scores = pd.read_parquet(path)
            kind = "pairwise" if score_mode(scores) == PAIRWISE_JUDGE else "data"
            if kind not in tables:
                tables[kind] = pd.read_parquet(data_dir / kind / f"{split}.parquet")
            found.append(outcomes(model, split, tables[kind], scores, path))
    return found


def main(argv: list[str]) -> int:
    from rmeval.benchmarks import benchmark
    from rmeval.benchmarks.judgebench import metrics, tables

    args = cli_settings.parse_args(build_parser(), argv)
    found = read_outcomes(Path(args.data), Path(args.scores), list(args.scored_models), list(args.splits))
    modes = {item.model: item.mode for item in found}
    out = Path(args.out)
    outputs = benchmark("judgebench")  # the files it writes, by key: their names come from its catalogue
    rows = [metrics.table_row(item) for item in found]
    tables.main_table(rows, modes, out, outputs.get("table").stem)
    tables.subsets_table([row for item in found for row in metrics.subset_rows(item)], out,
                         outputs.get("subsets").stem)
    tables.capability_table(rows, modes, out / Path(outputs.get("capability").path).name)
    tables.pairs_file([record for item in found for record in metrics.pair_records(item)], Path(args.pairs))
    print(f"judgebench-metrics: {len(args.scored_models)} model(s) x {len(args.splits)} split(s) -> {out}")
    return 0
