"""`rmeval run --model PATH_OR_HUB_ID [--name NAME] ... [--benchmarks ...] [--baseline KIND] [--against NAME_OR_FOLDER]
[--data ...] [--engine transformers|vllm] [--set KEY=VALUE] [--cores N] [--profile local|slurm] [-n]`.

Every problem of the input is named, one line each, before anything is written or run: `results/` stays as it was.
Then the config is written to results/run_config.yaml and the repository's Snakefile runs with it; when it ends, the
answer (rmeval.run_command.answer) is printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.run_command.models import BASELINE_SUFFIX, ModelArg, Resolved

EXAMPLES = """examples:
  rmeval run --model ./checkpoint-800 --model ./checkpoint-1200 --data demo      # two checkpoints, offline
  rmeval run --model org/reward-model --baseline length --benchmarks {every}
  rmeval run --model ./my-rm --set stats.alpha=0.01 -n                           # plan only
  rmeval run --model ./ckpt-1200 --against NAME --against ../ckpt-800/results     # NAME: from `rmeval published`
The config goes to results/run_config.yaml; `snakemake --configfile results/run_config.yaml` reruns it."""


class _ModelAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        namespace.models = [*namespace.models, ModelArg(str(values))]


class _NameAction(argparse.Action):
    """`--name` names the `--model` just before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if not namespace.models or namespace.models[-1].name is not None:
            parser.error(f"--name {values}: a --name follows the --model it names")
        namespace.models[-1].name = str(values)


def _all_names() -> list[str]:
    from rmeval.benchmarks import all_benchmarks

    return [bench.name for bench in all_benchmarks()]


def _benchmark_help() -> tuple[str, str]:
    from rmeval.benchmarks import all_benchmarks

    benchmarks = all_benchmarks()
    default = ",".join(bench.name for bench in benchmarks if bench.run_preset and bench.run_preset.by_default)
    data = "; ".join(f"{bench.run_preset.data_help} (default: {bench.run_preset.data[0]})"
                     for bench in benchmarks if bench.run_preset and bench.run_preset.data)
    return (f"comma-separated, of {', '.join(bench.name for bench in benchmarks)} (default: {default})",
            f"the data source of {data}")


def _cores(text: str) -> str:
    if text != "all" and not (text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: a number of cores >= 1, or all")
    return text


def build_parser(repository: Path) -> argparse.ArgumentParser:
    from rmeval.run_command.launch import profiles

    benchmarks_help, data_help = _benchmark_help()
    parser = argparse.ArgumentParser(
        prog="rmeval run", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLES.format(every=",".join(_all_names())),
        description="Evaluate one reward model, or several side by side, with the rmeval workflow: writes the config "
                    "to results/run_config.yaml, runs Snakemake with it, prints each model's headline numbers, the "
                    "comparisons and where the files are. Run it again to resume; add a --model to score only it.")
    parser.set_defaults(models=[])
    parser.add_argument("--model", action=_ModelAction, metavar="PATH_OR_HUB_ID",
                        help="a local model folder, a Hugging Face id (org/name) or a registry name (`rmeval "
                             "models`); repeat it for several models")
    parser.add_argument("--name", action=_NameAction, metavar="NAME",
                        help="the name of the --model just before it (default: the folder's or the id's last part)")
    parser.add_argument("--benchmarks", default=None, metavar="NAMES", help=benchmarks_help)
    parser.add_argument("--baseline", action="append", default=[], metavar="KIND",
                        help=f"add the registry's `KIND{BASELINE_SUFFIX}` entry as a model (e.g. length, random); "
                             "repeatable")
    parser.add_argument("--against", action="append", default=[], metavar="NAME_OR_FOLDER",
                        help="compare with published results (a registry name, `rmeval published`; or "
                             "published:BENCHMARK/MODEL) or an earlier run's results/ folder, not run here; repeatable")
    parser.add_argument("--data", default=None, metavar="SOURCE", help=data_help)
    parser.add_argument("--engine", default=None, choices=("transformers", "vllm"),
                        help="what runs every model's forward passes (default: each entry's `engine`, else "
                             "transformers); vllm starts a `vllm serve` per model from `rmeval engine install vllm`'s "
                             "environment (sequence classifiers only)")
    parser.add_argument("--set", action="append", default=[], dest="settings", metavar="KEY=VALUE",
                        help="any config key by its dotted path (config/README.md), the value as YAML; repeatable")
    parser.add_argument("--cores", default=None, metavar="N", type=_cores,
                        help="Snakemake's --cores (default: all, or what the profile says)")
    parser.add_argument("--profile", default=None, choices=profiles(repository),
                        help="Snakemake's --workflow-profile profiles/<name> (default: profiles/default)")
    parser.add_argument("-n", "--dry-run", action="store_true",
                        help="plan only: Snakemake's dry run; results/ is left as it is")
    return parser


@dataclass(frozen=True)
class Setup:
    """The run as checked: its config and its models."""

    config: dict[str, Any]
    models: list[Resolved]
    opponents: list[Any] = field(default_factory=list)  # `--against` (rmeval.run_command.against.Opponent)
    notes: list[str] = field(default_factory=list)


def _problem_report(problems: Sequence[str]) -> str:
    if len(problems) == 1:
        return f"{problems[0]}\nNothing was written or run."
    lines = "\n".join(f"  {line}" for line in problems)
    return f"{len(problems)} problems:\n{lines}\nNothing was written or run."


def prepare(args: argparse.Namespace, repository: Path) -> Setup:
    """The checked config; every problem of the input at once, in an RmevalError (nothing is written)."""
    from rmeval.config_check import schema_default
    from rmeval.devices import local_gpu_cap
    from rmeval.run_command import against, build, overrides
    from rmeval.run_command.models import Machine, Registry, resolve_all, with_engine
    from rmeval.run_plan import config_path

    problems: list[str] = []
    settings: list[overrides.Setting] = []
    for text in args.settings:
        try:
            settings.append(overrides.parse_setting(text))
        except RmevalError as error:
            problems.append(str(error))
    names = ([name.strip() for name in args.benchmarks.split(",") if name.strip()] if args.benchmarks is not None
             else _default_benchmarks())
    benchmarks, unknown = build.selected(names)
    problems += unknown
    if not names:
        problems.append("--benchmarks: name at least one benchmark")
    if not args.models and not args.baseline:
        problems.append("name a model: --model PATH_OR_HUB_ID (repeatable), or --baseline KIND")
    if (data := build.data_problem(args.data, benchmarks)) is not None:
        problems.append(data)
    registry_value = next((s.value for s in reversed(settings) if s.path == ("registry",)), None)
    registry_value = str(registry_value) if registry_value is not None else schema_default("registry")
    try:
        registry = Registry.load(Path(config_path(registry_value, repository)))
    except RmevalError as error:
        raise RmevalError(_problem_report([*problems, f"registry: {error}"])) from None
    machine = Machine(local_gpu_cap(), cluster=args.profile == "slurm")
    models, model_problems = resolve_all(args.models, args.baseline, registry, machine)
    models, engine_problems = with_engine(models, args.engine, registry)
    problems += model_problems + engine_problems
    opponents, against_problems = against.resolve_against(args.against, registry.specs, benchmarks,
                                                          {model.name: model.given for model in models})
    problems += against_problems
    config: dict[str, Any] = {}
    if not problems:
        try:
            config = build.build_config(models, benchmarks, args.data, registry_value, repository)
        except RmevalError as error:
            problems.append(str(error))
    if not problems:
        problems += overrides.apply_all(config, settings)
    if not problems and opponents:
        against.add_to_config(config, opponents)
        problems += against.file_problems(config, opponents, registry.specs,
                                          lambda path: config_path(path, repository, Path.cwd()))
    if problems:
        raise RmevalError(_problem_report(problems))
    return Setup(config, models, opponents, against.mismatch_notes(config, opponents))


def _default_benchmarks() -> list[str]:
    from rmeval.benchmarks import all_benchmarks

    return [bench.name for bench in all_benchmarks() if bench.run_preset and bench.run_preset.by_default]


def _models_block(setup: Setup) -> str:
    everyone = [*((m.name, m.given, m.how) for m in setup.models), *((o.name, o.given, o.how) for o in setup.opponents)]
    width = max(len(name) for name, _, _ in everyone)
    lines = [f"  {name:<{width}}  {given}: {how}" for name, given, how in everyone]
    lines += [f"  note: {note}" for note in setup.notes]
    return "rmeval run: models\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from rmeval.run_command.answer import AnswerInputs, answer
    from rmeval.run_command.launch import Launch, config_text, write_config
    from rmeval.run_outputs.context import REPOSITORY
    from rmeval.run_plan import enabled_benchmarks

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(REPOSITORY).parse_args(argv)
    setup = prepare(args, REPOSITORY)
    launch = Launch(REPOSITORY, Path.cwd(), args.cores, args.profile, args.dry_run)
    print(_models_block(setup), flush=True)
    configfile = write_config(config_text(setup.config, launch, argv), launch)
    print(f"rmeval run: config {configfile.relative_to(launch.workdir)}; running: "
          f"{launch.command(launch.arguments())}", flush=True)
    status = launch.run()
    if status != 0:
        print(f"rmeval run: Snakemake stopped (exit {status}); what finished is kept: fix what it names and run the "
              "same command again", file=sys.stderr)
        return status
    if args.dry_run:
        return 0
    names = [model.name for model in setup.models] + [opponent.name for opponent in setup.opponents]
    benchmarks = enabled_benchmarks(setup.config)  # `--set` may have turned one on or off
    print()
    print(answer(AnswerInputs(launch.workdir, benchmarks, names, launch.configfile, launch.command(launch.base()))))
    return 0
