"""The `rmeval` command line: a thin dispatcher over subcommands.

Each subcommand lives in its own module and exposes `main(argv: list[str]) -> int`.
Modules are imported only when their command runs, so start-up stays cheap for the
commands Snakemake calls many times (statistics, figures, tables).
"""

from __future__ import annotations

import errno
import importlib
import sys

# command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "arxiv-fetch": ("rmeval.benchmarks.fairness.arxiv.cli_fetch", "Collect single-group candidate papers for one group (API or snapshot)."),
    "arxiv-select": ("rmeval.benchmarks.fairness.arxiv.cli_select", "Drop cross-group titles, sample each group, write data + manifests."),
    "tiny-model": ("rmeval.testing.tiny_model", "Write a small offline Llama-style reward model (for smoke tests)."),
    "score": ("rmeval.scoring.cli", "Score one input table with one reward model."),
    "model-server": ("rmeval.scoring.server", "Serve one loaded model to a run's scoring jobs (started by `score`)."),
    "download-model": ("rmeval.scoring.download", "Fetch a model snapshot at its pinned revision into HF_HOME."),
    "fairness-stats": ("rmeval.benchmarks.fairness.stats.cli", "Group-fairness statistics and Tables 1-4 from score files."),
    "fairness-summary": ("rmeval.benchmarks.fairness.summary", "Plain-words summary of the fairness results (its section alone)."),
    "fairness-figures": ("rmeval.benchmarks.fairness.figures.cli", "Figures 2-3 and the extra fairness figures."),
    "rewardmath-prepare": ("rmeval.benchmarks.rewardmath.prepare", "Load RewardMATH / RewardBench math-prm and split per subject."),
    "rewardmath-metrics": ("rmeval.benchmarks.rewardmath.cli_metrics", "RewardMATH accuracy/MRR from official or workflow scores."),
    "lock": ("rmeval.lock.cli", "Write, compare (diff), show or rebuild from a run's results/lock.yaml."),
    "rewardmath-positions": ("rmeval.benchmarks.rewardmath.pairwise:positions_main",
                             "Add recorded (or seeded) chosen positions for pairwise judges."),
    "rewardmath-export": ("rmeval.benchmarks.rewardmath.pairwise:export_main",
                          "One model's RewardMATH scores in the official result-file layout."),
    "rewardmath-figures": ("rmeval.benchmarks.rewardmath.figures", "RewardBench-math vs RewardMATH accuracy figure."),
    "rewardmath-summary": ("rmeval.benchmarks.rewardmath.summary", "Plain-words RewardMATH section."),
    # run-level outputs (rmeval.run_outputs.catalogue.RUN.commands)
    "run-reproduction": ("rmeval.run_outputs.reproduction", "Every enabled benchmark's statistics beside the published ones, with verdicts."),
    "run-summary": ("rmeval.run_outputs.summary", "The run's plain-words summary: every enabled benchmark's section."),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: rmeval <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", "Run `rmeval <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0
    if args[0] == "--version":
        from rmeval import __version__

        print(__version__)
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"rmeval: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    from rmeval.errors import RmevalError

    module_name, _, function = COMMANDS[name][0].partition(":")
    entry = getattr(importlib.import_module(module_name), function or "main")
    try:
        return int(entry(rest) or 0)
    except RmevalError as error:
        print(f"rmeval {name}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        # A full disk or quota is the user's environment, not a bug: one line naming the file, no traceback.
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(f"rmeval {name}: error: {error.strerror} while writing {error.filename or 'output'}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
