"""`rmeval run-summary`: the run's one-page summary in plain words, `results/summary.md`.

Each benchmark named by `--benchmarks` that declares a `summary_section` provider (its catalogue) writes its own
Markdown section from its own tables; the sections follow one another in the order given (the catalogue's), one
blank line apart. Last comes "Which model is better" (rmeval.run_outputs.compare.summary), from the run's
comparisons and leaderboard.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from rmeval.benchmarks.catalogue import import_target
from rmeval.errors import RmevalError
from rmeval.run_outputs.catalogue import RUN
from rmeval.run_outputs.context import add_arguments, contexts


def random_models_notice(models: Sequence[str], code: str = "`", strong: str = "**") -> str:
    """The line that says the rewards come from random tiny models (config `tiny_models`, the demo, or a folder
    `rmeval tiny-model` wrote): the summary's first line (Markdown), the report's (reStructuredText: code "", as rst nests no markup in bold) and
    the console's (plain: strong "")."""
    return (f"{strong}These rewards come from random tiny models ({', '.join(models)}, built by {code}rmeval "
            f"tiny-model{code}) and mean nothing:{strong} this run shows what the workflow writes, not anything about "
            "reward models.")


def compose(sections: Sequence[str], random_models: Sequence[str] = ()) -> str:
    """The summary: each section without its trailing blank lines, one blank line between them; first, when some
    model's weights are random, the line that says so."""
    notice = [random_models_notice(random_models)] if random_models else []
    return "\n\n".join([*notice, *(section.rstrip("\n") for section in sections)]) + "\n"


def which_is_better(root: Path, names: Sequence[str], alpha: float, baselines: dict[str, str]) -> str:
    """The "Which model is better" section, from the run's comparisons.csv and leaderboard.csv; "" when none of the
    benchmarks compares models (its catalogue's `compare`)."""
    import rmeval.benchmarks as benchmarks
    from rmeval.run_outputs.compare.summary import section

    if not any(benchmarks.benchmark(name).compare for name in names):
        return ""
    return section(root, root / RUN.get("comparisons").path, root / RUN.get("leaderboard").path, names, alpha,
                   baselines)


def _json(value: str | dict[str, str]) -> object:
    """A JSON list given as a flag; each of its objects as the rule's `--settings` gives them (already parsed)."""
    return json.loads(value) if isinstance(value, str) else value


def build_parser() -> argparse.ArgumentParser:
    from rmeval.cli_settings import add_settings_argument

    parser = argparse.ArgumentParser(prog="rmeval run-summary", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--out", type=Path, default=None,
                        help="Markdown file to write (default: the catalogued one under --root, results/summary.md)")
    parser.add_argument("--random-models", nargs="*", default=[],
                        help="models whose weights are random (config `tiny_models`): the first line says so")
    parser.add_argument("--baseline-models", nargs="*", default=[], metavar="MODEL=KIND",
                        help="the trivial baselines among the models (registry adapter `baseline`) and their kind")
    parser.add_argument("--not-from-this-run", type=_json, default=[], metavar="JSON",
                        help="the files in results/ this run did not write, as a JSON list of {path, written, run} "
                             "(rmeval.run_outputs.strays): the last section names them")
    add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    from rmeval.cli_settings import parse_args
    from rmeval.io.atomic import write_text_atomic
    from rmeval.run_outputs.compare.command import baseline_kinds

    args = parse_args(build_parser(), argv)
    chosen = contexts(args, "summary_section")
    if not chosen:
        raise RmevalError(f"--benchmarks: none of {', '.join(args.benchmarks)} has a summary section")
    sections = [import_target(bench.summary_section)(context) for bench, context in chosen]
    better = which_is_better(args.root, args.benchmarks, args.alpha, baseline_kinds(args.baseline_models))
    sections += [better] if better else []
    if args.not_from_this_run:
        from rmeval.run_outputs.strays import markdown_section

        sections.append(markdown_section(args.not_from_this_run))
    out = args.out or args.root / RUN.get("summary").path
    write_text_atomic(compose(sections, args.random_models), out)
    print(f"rmeval run-summary: wrote {out} ({', '.join(bench.name for bench, _ in chosen)})")
    return 0
