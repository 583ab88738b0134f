"""`rmeval run --model PATH_OR_HUB_ID [--name NAME] ... [--benchmarks ...] [--baseline KIND] [--against NAME_OR_FOLDER]
[--data ...] [--engine transformers|vllm] [--set KEY=VALUE] [--keep] [--clean] [--cores N] [--profile local|slurm]
[-n]`.

Every problem is named, one line each, before anything is written or run: the input (models, benchmarks, `--data`,
`--set` keys and values against the schema) and then the workflow's own checks (rmeval.run_command.checks: local
files and their columns, a snapshot, network, the cache). A refused run leaves `results/` as it was (its config, when
one was built, goes beside .snakemake/). The command's models are the run's models: the first lines name the earlier
models in results/ it leaves out (`--keep` carries them forward). Then the config is written to
results/run_config.yaml and the repository's Snakefile runs with it; when it ends, the answer
(rmeval.run_command.answer) is printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.run_command.models import BASELINE_SUFFIX, ModelArg, Resolved

REGISTRY_KEY = "registry"  # `--set registry=FILE` adds FILE's entries to the shipped registry

EXAMPLES = """examples:
  rmeval run --model ./checkpoint-800 --model ./checkpoint-1200 --data demo      # two checkpoints, offline
  rmeval run --model org/reward-model --baseline length --benchmarks {every}
  rmeval run --model ./my-rm --set stats.alpha=0.01 -n                           # plan only
  rmeval run --model ./ckpt-1200 --against NAME --against ../ckpt-800/results     # NAME: from `rmeval published`
The config goes to results/run_config.yaml only once every check passed (a refused run leaves results/ as it was);
`snakemake --configfile results/run_config.yaml` reruns it."""


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
                    "comparisons and where the files are. Run it again to resume: only what is missing is scored. The "
                    "command's models are the run's models: a model of an earlier run is left out unless named "
                    "again (or --keep), and the first lines say which.")
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
                        help="any config key by its dotted path (config/README.md), the value as YAML; repeatable. "
                             "registry=FILE adds FILE's entries to the shipped registry (a name in both is an error)")
    parser.add_argument("--cores", default=None, metavar="N", type=_cores,
                        help="Snakemake's --cores (default: all, or what the profile says)")
    parser.add_argument("--profile", default=None, choices=profiles(repository),
                        help="Snakemake's --workflow-profile profiles/<name> (default: profiles/default)")
    parser.add_argument("--keep", action="store_true",
                        help="carry the previous run's models (results/run_config.yaml) forward: without it, the "
                             "command's models are the run's models, and the first lines name the earlier ones left "
                             "out")
    parser.add_argument("--clean", action="store_true",
                        help="move the files in results/ that this run does not write (earlier runs' tables, figures "
                             "and score folders) to results/.previous/<UTC time>/; nothing is deleted (a dry run moves "
                             "nothing)")
    parser.add_argument("-n", "--dry-run", action="store_true",
                        help="plan only: Snakemake's dry run; results/ is left as it is")
    return parser


@dataclass(frozen=True)
class Setup:
    """The run as checked: its config, its models, the console's first lines (the earlier models it leaves out)
    and its warnings (the same weights twice; a dry run's machine problems)."""

    config: dict[str, Any]
    models: list[Resolved]
    earlier: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plan: Any = None  # rmeval.run_plan.RunPlan, when the machine checks ran
    opponents: list[Any] = field(default_factory=list)  # `--against` (rmeval.run_command.against.Opponent)
    notes: list[str] = field(default_factory=list)  # how an opponent's data or settings differ from this run's


class Refused(RmevalError):
    """Every problem of the run at once; `config`: the config it would have run, when one could be built."""

    def __init__(self, problems: Sequence[str], config: dict[str, Any] | None = None, advice: str = "",
                 kept: str | None = None) -> None:
        self.problems, self.config, self.advice = list(problems), config, advice
        super().__init__(_problem_report(self.problems, advice, kept))


def _problem_report(problems: Sequence[str], advice: str = "", kept: str | None = None) -> str:
    tail = ("Nothing was written or run." if kept is None else
            f"Nothing was run, and results/ is as it was; the config it would have run: {kept}")
    body = problems[0] if len(problems) == 1 else "\n".join([f"{len(problems)} problems:",
                                                               *(f"  {line}" for line in problems)])
    return "\n".join([body, *([advice] if advice else []), tail])


def _registry(settings: Sequence[Any], repository: Path) -> tuple[Any, str | None]:
    """The shipped registry plus the `--set registry=FILE` one (its entries added); or a problem line."""
    from rmeval.config_check import schema_default
    from rmeval.io.paths import config_path
    from rmeval.run_command.models import Registry

    shipped = Path(config_path(schema_default("registry"), repository))
    given = next((s.value for s in reversed(settings) if s.path == (REGISTRY_KEY,)), None)
    added = Path(str(given)).expanduser() if given is not None else None
    try:
        return Registry.load(shipped, added), None
    except RmevalError as error:
        return Registry.load(shipped), f"--set registry={given}: {error}" if added else f"registry: {error}"


def prepare(args: argparse.Namespace, repository: Path, workdir: Path | None = None, machine: bool = False) -> Setup:
    """The checked config; every problem at once, in a Refused (nothing is written). `machine`: run the workflow's
    own checks too (rmeval.run_command.checks: plan, input files, network, cache), as a real run would."""
    from rmeval.devices import local_gpu_cap
    from rmeval.io.paths import config_path
    from rmeval.run_command import against, build, checks, overrides
    from rmeval.run_command.models import Machine, resolve_all, same_names, same_weights, with_engine
    from rmeval.run_command.previous import Earlier, earlier_lines

    workdir = Path.cwd() if workdir is None else workdir
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
    if not args.models and not args.baseline and not args.keep:
        problems.append("name a model: --model PATH_OR_HUB_ID (repeatable), or --baseline KIND")
    if (data_problem := build.data_problem(args.data, benchmarks)) is not None:
        problems.append(data_problem)
    registry, registry_problem = _registry(settings, repository)
    problems += [registry_problem] if registry_problem else []
    models, model_problems = resolve_all(args.models, args.baseline, registry, Machine(local_gpu_cap(),
                                                                                      cluster=args.profile == "slurm"))
    models, engine_problems = with_engine(models, args.engine, registry)
    model_problems = [*model_problems, *engine_problems]
    problems += model_problems
    earlier = Earlier.read(workdir)
    if args.keep:
        models += earlier.kept([model.name for model in models])
        problems += [line for line in same_names(models) if line not in problems]
        if not models and not model_problems:
            problems.append("--keep: results/run_config.yaml names no model of a previous run; name a model: --model "
                            "PATH_OR_HUB_ID, or --baseline KIND")
    opponents, against_problems = against.resolve_against(args.against, registry.specs, benchmarks,
                                                          {model.name: model.given for model in models})
    problems += against_problems
    # an opponent from the user's registry file is written inline, as its models are: the config keeps the shipped one
    opponents = [replace(o, entry={**registry.written[o.entry], "name": o.entry})
                 if isinstance(o.entry, str) and o.entry in registry.added_names else o for o in opponents]
    config: dict[str, Any] = {}
    found: list[str] = []  # the schema's problems of the config
    advice = ""  # the way out of the machine's problems
    # The config is built even when a model, a benchmark name or `--data` is wrong, so that the `--set` keys are
    # checked too: each model name once (with none resolved, a weightless stand-in: the registry's first baseline),
    # the default benchmarks beside the ones named right, no `--data` when it is wrong.
    in_config = list({model.name: model for model in reversed(models)}.values())[::-1] or _stand_in(registry)
    chosen = benchmarks if not unknown else build.selected([*_default_benchmarks(), *names])[0]
    for data in dict.fromkeys([args.data if data_problem is None else None, None]):
        try:
            config = build.build_config(in_config, chosen, data, _shipped_registry(), repository)
            break
        except RmevalError as error:
            problems += [str(error)] if str(error) not in problems else []
    if config:  # the `--set` keys and values against the schema, whatever else is wrong
        found = overrides.apply_all(config, [s for s in settings if s.path != (REGISTRY_KEY,)])
        complete = not problems
        problems += found if complete else [line for line in found if line.startswith("--set ")]
        valid = complete and not found
    else:
        valid = False
    notes: list[str] = []
    if valid and opponents:  # the opponents join the config; their files are checked before any job
        against.add_to_config(config, opponents)
        opponent_problems = against.file_problems(config, opponents, registry.specs,
                                                  lambda path: config_path(path, repository, Path.cwd()))
        problems += opponent_problems
        valid = not opponent_problems
        notes = against.mismatch_notes(config, opponents) if valid else []
    setup = Setup(config, models, earlier_lines(earlier, [model.name for model in models], args.keep),
                  same_weights(models, registry), opponents=opponents, notes=notes)
    # the workflow's checks need a config the schema accepts; a model that did not resolve is only left out of it
    if machine and config and not found and len(problems) == len(model_problems):
        checked = checks.machine_problems(config, repository, workdir)
        advice = checked.advice
        if args.dry_run and valid:
            setup.warnings.extend(f"a real run stops on: {line}" for line in checked.problems)
        else:
            problems += checked.problems
        setup = replace(setup, plan=checked.plan)
    if problems:
        raise Refused(problems, config if valid else None, advice)
    return setup


def _stand_in(registry: Any) -> list[Resolved]:
    from rmeval.run_command.models import resolve_baseline

    kinds = registry.baselines()
    return [resolve_baseline(kinds[0], registry)] if kinds else []


def _shipped_registry() -> str:
    from rmeval.config_check import schema_default

    return str(schema_default("registry"))


def _default_benchmarks() -> list[str]:
    from rmeval.benchmarks import all_benchmarks

    return [bench.name for bench in all_benchmarks() if bench.run_preset and bench.run_preset.by_default]


def _models_block(setup: Setup) -> str:
    everyone = [*((m.name, m.given, m.how) for m in setup.models), *((o.name, o.given, o.how) for o in setup.opponents)]
    width = max(len(name) for name, _, _ in everyone)
    lines = [f"  {name:<{width}}  {given}: {how}" for name, given, how in everyone]
    lines += [f"  note: {note}" for note in setup.notes]
    return "rmeval run: models\n" + "\n".join(lines)


def _refused(error: Refused, launch: Any, argv: list[str]) -> Refused:
    """The refusal, its config kept beside .snakemake/ (as a dry run's) when one was built: results/ as it was."""
    from rmeval.run_command.launch import REFUSED_CONFIG, config_text, write_config

    if error.config is None:
        return error
    path, _ = write_config(config_text(error.config, launch, argv), launch, REFUSED_CONFIG)
    return Refused(error.problems, error.config, error.advice, str(path.relative_to(launch.workdir)))


def main(argv: list[str] | None = None) -> int:
    from rmeval.run_command.answer import AnswerInputs, answer
    from rmeval.run_command.launch import Launch, config_text, write_config
    from rmeval.run_command.previous import record_run
    from rmeval.run_outputs.context import REPOSITORY
    from rmeval.run_outputs.strays import move_away, not_from_this_run, own_outputs
    from rmeval.run_plan import enabled_benchmarks

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(REPOSITORY).parse_args(argv)
    launch = Launch(REPOSITORY, Path.cwd(), args.cores, args.profile, args.dry_run)
    try:
        setup = prepare(args, REPOSITORY, launch.workdir, machine=True)
    except Refused as error:
        raise _refused(error, launch, argv) from None
    for line in [*setup.earlier, *(f"rmeval run: warning: {line}" for line in setup.warnings)]:
        print(line, flush=True)
    print(_models_block(setup), flush=True)
    names = [model.name for model in setup.models] + [opponent.name for opponent in setup.opponents]
    benchmarks = enabled_benchmarks(setup.config)  # `--set` may have turned one on or off
    strays = not_from_this_run(launch.workdir, own_outputs(setup.plan)) if setup.plan is not None else []
    if args.clean and strays and not args.dry_run:
        moved = move_away(launch.workdir, strays)
        print(f"rmeval run: --clean moved what this run does not write ({len(strays)} of results/'s files and "
              f"folders) to {moved.relative_to(launch.workdir)}/ (nothing deleted)", flush=True)
        strays = []
    configfile, changed = write_config(config_text(setup.config, launch, argv), launch)
    if changed and not args.dry_run:
        record_run(launch.workdir, argv, names, [bench.name for bench in benchmarks])
    print(f"rmeval run: config {configfile.relative_to(launch.workdir)}; running: "
          f"{launch.command(launch.arguments())}", flush=True)
    status = launch.run()
    if status != 0:
        print(f"rmeval run: Snakemake stopped (exit {status}); what finished is kept: fix what it names and run the "
              "same command again", file=sys.stderr)
        return status
    if args.dry_run:
        return 0
    print()
    print(answer(AnswerInputs(launch.workdir, benchmarks, names, launch.configfile, launch.command(launch.base()),
                              tuple(setup.plan.random_weight_models) if setup.plan else (), len(strays))))
    return 0
