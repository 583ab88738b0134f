"""`rmeval rmb-metrics`: every model's RMB scores -> rmb.{csv,md,tex}, rmb_scenarios.{csv,md,tex} and the
capability file. The chance row comes first, then the models in config order."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.config_check import schema_default


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rmb-metrics", description=__doc__)
    parser.add_argument("--data", required=True, help="the prepared texts table (rmeval rmb-prepare); items beside it")
    parser.add_argument("--scores", help="folder of {model}/texts.parquet (default: results/scores/rmb)")
    parser.add_argument("--scored-models", nargs="*", default=[], help="the scored models' names, in table order")
    parser.add_argument("--out", required=True, help="folder of the tables (results/tables)")
    parser.add_argument("--average", choices=["items", "scenarios"], default=schema_default("rmb.average"),
                        help="a cell's mean over its items, or over its scenarios' accuracies")
    cli_settings.add_settings_argument(parser)
    return parser


def chance_rows(items: Any, average: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random scorer's expected accuracy: 1/N per item (1/2 a pair; N responses of a BoN item, continuous
    rewards, no ties)."""
    from rmeval.benchmarks.rmb.metrics import model_rows
    from rmeval.benchmarks.rmb.tables import CHANCE

    sizes = items.groupby(["kind", "item_id"], sort=False).agg(goal=("goal", "first"), scenario=("scenario", "first"),
                                                               n=("k", "size")).reset_index()
    return model_rows("Random (chance)", CHANCE, sizes.assign(correct=1.0 / sizes["n"]), average)


def main(argv: list[str]) -> int:
    import pandas as pd

    from rmeval.benchmarks import benchmark
    from rmeval.benchmarks.catalogue import scores_dir
    from rmeval.benchmarks.rmb.layout import NAME
    from rmeval.benchmarks.rmb.metrics import Layout, model_rows, rewards_of
    from rmeval.benchmarks.rmb.planner import TABLE
    from rmeval.benchmarks.rmb.tables import capability_table, main_table, scenarios_table

    args = cli_settings.parse_args(build_parser(), argv)
    data = Path(args.data)
    texts, items = pd.read_parquet(data), pd.read_parquet(data.with_name("items.parquet"))
    layout = Layout.of(texts, items)
    main_rows, scenario_rows = [], []
    chance, chance_scenarios = chance_rows(items, args.average)
    main_rows.append(chance)
    scenario_rows += chance_scenarios
    for model in args.scored_models:
        path = Path(args.scores or scores_dir(NAME)) / model / f"{TABLE}.parquet"
        rewards, mode = rewards_of(texts, pd.read_parquet(path), path)
        row, per_scenario = model_rows(model, mode, layout.frame(rewards), args.average)
        main_rows.append(row)
        scenario_rows += per_scenario
    outputs = benchmark(NAME)
    out = Path(args.out)
    main_table(main_rows, out, outputs.get("main").stem, args.average)
    scenarios_table(scenario_rows, out, outputs.get("scenarios").stem, args.average)
    capability_table(main_rows, out / Path(outputs.get("capability").path).name)
    print(f"rmb-metrics: {len(args.scored_models)} model(s) -> {out}")
    return 0
