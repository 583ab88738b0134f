"""`rmeval rewardbench-metrics`: every model's scores on one RewardBench version -> its tables.

v1 writes rewardbench_scores.* and rewardbench_sections.*; v2 writes rewardbench2_scores.*. The chance rows come
first, then the models in config order.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rmeval import cli_settings
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.rewardbench.versions import V1, VERSIONS
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardbench-metrics", description=__doc__)
    parser.add_argument("--version", choices=sorted(VERSIONS), required=True)
    parser.add_argument("--data", required=True, help="the prepared table (rmeval rewardbench-prepare)")
    parser.add_argument("--scores", help="folder of {model}/<version>.parquet (default: results/scores/<version>)")
    parser.add_argument("--models", nargs="*", default=[], help="the scored models, in table order")
    parser.add_argument("--out", required=True, help="folder of the tables (results/tables)")
    parser.add_argument("--bootstrap", type=int, default=schema_default("stats.bootstrap"))
    parser.add_argument("--seed", type=int, default=schema_default("stats.seed"))
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    import pandas as pd

    from rmeval.benchmarks.rewardbench import metrics, tables
    from rmeval.benchmarks.rewardbench.official import partial_note

    args = cli_settings.parse_args(build_parser(), argv)
    version = VERSIONS[args.version]
    data = pd.read_parquet(args.data)
    out = Path(args.out)
    scored = []
    for model in args.models:
        path = Path(args.scores or version.scores_dir) / model / f"{version.name}.parquet"
        scored.append(metrics.join(data, pd.read_parquet(path), model, path))
    outputs = benchmark(version.name)  # the files it writes, by key: their names come from its catalogue
    capability = out / Path(outputs.get("capability").path).name
    partial = partial_note(version.name, data["subset"].unique())  # a file with only some subsets
    if version is V1:
        subsets, sections = metrics.chance_v1(data)
        for item in scored:
            more_subsets, more_sections = metrics.v1_rows(item)
            subsets += more_subsets
            sections += more_sections
        tables.v1_subsets_table(subsets, out, outputs.get("scores").stem)
        tables.v1_sections_table(sections, out, outputs.get("sections").stem, partial)
        tables.capability_table(sections, f"{version.title} overall", "score", capability)
    else:
        rows = metrics.chance_v2(data)
        for item in scored:
            rows += metrics.v2_rows(item, args.bootstrap, args.seed)
        tables.v2_scores_table(rows, out, outputs.get("scores").stem, partial)
        tables.capability_table(rows, f"{version.title} overall", "score", capability)
    print(f"rewardbench-metrics: {version.name}: {len(scored)} model(s) -> {out}")
    return 0


def export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rewardbench-export",
                                     description="One model's RewardBench scores in the official results layout "
                                                 "(run_rm.py / run_v2.py / run_generative_v2.py `results_grouped`: "
                                                 "model, model_type, chat_template, one score per subset in [0, 1]).")
    parser.add_argument("--version", choices=sorted(VERSIONS), required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True, help="the prepared table")
    parser.add_argument("--scores", required=True, help="the model's score file")
    parser.add_argument("--meta", help="its .meta.json (default: beside the score file), for `chat_template`")
    parser.add_argument("--out", required=True, help="the JSON file")
    cli_settings.add_settings_argument(parser)
    return parser


MODEL_TYPES = {"classifier": "Seq. Classifier", "judge (direct)": "Generative RM"}  # the official labels


def chat_template_used(meta: Path) -> str | None:
    """The export's `chat_template`: "tokenizer" for the tokenizer's own template, as the official scripts write
    it; "registry:<sha256 16>" / "adapter:<...>" for another jinja template; None where no template was used."""
    if not meta.is_file():
        raise RmevalError(f"{meta}: the score file's .meta.json is missing; rerun its score job")
    details = json.loads(meta.read_text(encoding="utf-8")).get("adapter_details") or {}
    source, digest = details.get("chat_template_source"), details.get("chat_template_sha256")
    if source == "tokenizer":
        return "tokenizer"
    return f"{source}:{digest}" if source in ("registry", "adapter") and digest else None


def export_main(argv: list[str]) -> int:
    import pandas as pd

    from rmeval.benchmarks.rewardbench import metrics
    from rmeval.io.atomic import write_json_atomic

    args = cli_settings.parse_args(export_parser(), argv)
    version = VERSIONS[args.version]
    scored = metrics.join(pd.read_parquet(args.data), pd.read_parquet(args.scores), args.model, Path(args.scores))
    if version is V1:
        subsets = {row["subset"]: row["accuracy"] / 100 for row in metrics.v1_rows(scored)[0]}
    else:
        subsets = {row["subset"]: row["score"] / 100 for row in metrics.v2_rows(scored, 0, 0)
                   if row["subset"] != metrics.OVERALL}
    scores = Path(args.scores)
    meta = Path(args.meta) if args.meta else scores.with_name(scores.name.removesuffix(".parquet") + ".meta.json")
    if scored.published is not None:  # the file's own fields: what the authors' run was
        model_type = f"Published ({scored.published.get('model_type') or 'model type not recorded'})"
        chat_template = scored.published.get("chat_template")
    else:
        model_type = f"Trivial baseline ({scored.baseline.kind})" if scored.baseline else MODEL_TYPES[scored.mode]
        chat_template = chat_template_used(meta)
    write_json_atomic({"model": args.model, "model_type": model_type,
                       "chat_template": chat_template, **subsets}, args.out, sort_keys=False)
    print(f"rewardbench-export: {args.model} -> {args.out}")
    return 0
