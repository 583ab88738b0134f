"""`rmeval rmbench-metrics`: every model's RM-Bench scores -> rmbench.{csv,md,tex} (model, chat, math, code, safety,
easy, normal, hard, average), rmbench_subsets.* (per domain and difficulty, with intervals) and the capability file;
models in config order."""

from __future__ import annotations

import argparse
from pathlib import Path

from rmeval import cli_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rmbench-metrics", description=__doc__)
    parser.add_argument("--data", required=True, help="the prepared table (rmeval rmbench-prepare)")
    parser.add_argument("--scores", help="folder of {model}/rmbench.parquet (default: results/scores/rmbench)")
    parser.add_argument("--models", nargs="*", default=None, help="the scored models' names, in table order")
    parser.add_argument("--out", required=True, help="folder of the tables (results/tables)")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    import pandas as pd

    from rmeval.benchmarks import benchmark
    from rmeval.benchmarks.catalogue import scores_dir
    from rmeval.benchmarks.rmbench import metrics, tables
    from rmeval.benchmarks.rmbench.paths import NAME, TABLE

    args = cli_settings.parse_args(build_parser(), argv)
    data = pd.read_parquet(args.data)
    layout = metrics.Layout.of(data)
    scored = [metrics.read_model(layout, data, Path(args.scores or scores_dir(NAME)) / model / f"{TABLE}.parquet",
                                 model) for model in args.models or []]
    outputs = benchmark(NAME)  # the files it writes, by key: their names come from its catalogue
    out = Path(args.out)
    rows = [metrics.main_row(item) for item in scored]
    tables.main_table(rows, out, outputs.get("scores").stem)
    tables.subsets_table([row for item in scored for row in metrics.subset_rows(item)], out,
                         outputs.get("subsets").stem)
    tables.capability_table(rows, out / Path(outputs.get("capability").path).name)
    print(f"rmbench-metrics: {len(scored)} model(s), {len(data['item'].unique())} prompts -> {out}")
    return 0
