"""The `rmeval` command line: a thin dispatcher over subcommands.

Each subcommand lives in its own module and exposes `main(argv: list[str]) -> int`.
Modules are imported only when their command runs, so start-up stays cheap for the
commands Snakemake calls many times (statistics, figures, tables).
"""

from __future__ import annotations

import errno
import sys

# The shared commands: command name -> (module or "module:function", one-line help). Each benchmark adds its own
# (its catalogue's `commands`), so adding a benchmark touches nothing here.
SHARED_COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("rmeval.run_command.cli", "Evaluate a model, or several side by side: builds the config, runs the workflow, prints the answer."),
    "tiny-model": ("rmeval.testing.tiny_model", "Write a small offline Llama-style reward model (for smoke tests)."),
    "score": ("rmeval.scoring.cli", "Score one input table with one reward model."),
    "model-server": ("rmeval.scoring.server", "Serve one loaded model to a run's scoring jobs (started by `score`)."),
    "download-model": ("rmeval.scoring.download", "Fetch a model snapshot at its registry revision (else main) into HF_HOME."),
    "lock": ("rmeval.lock.cli", "Write, compare (diff) or show a run's results/lock.yaml."),
    "engine": ("rmeval.vllm_engine.cli", "Build or show the environment of a scoring engine (`engine install vllm`)."),
    "models": ("rmeval.registry_listing", "List the model registry: adapter, parameters, GPUs, revision, fixture."),
    "published": ("rmeval.published.listing", "List the registry's published models (per-item results to compare against)."),
}


def commands() -> dict[str, tuple[str, str]]:
    """Every command: the shared ones, the run-level outputs' ones, then each benchmark's in catalogue order
    (import-free catalogues)."""
    from rmeval.benchmarks import all_benchmarks
    from rmeval.run_outputs.catalogue import RUN

    found = dict(SHARED_COMMANDS)
    found.update({command.name: (command.target, command.help) for command in RUN.commands})
    for bench in all_benchmarks():
        for command in bench.commands:
            if command.name in found:
                raise RuntimeError(f"benchmark {bench.name!r}: command {command.name!r} is already defined")
            found[command.name] = (command.target, command.help)
    return found


def _usage(known: dict[str, tuple[str, str]]) -> str:
    width = max(len(name) for name in known)
    lines = ["usage: rmeval <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in known.items()]
    lines += ["", "Run `rmeval <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    known = commands()
    if not args or args[0] in {"-h", "--help", "help"}:
        print(_usage(known))
        return 0
    if args[0] == "--version":
        from rmeval import __version__

        print(__version__)
        return 0
    name, rest = args[0], args[1:]
    if name not in known:
        print(f"rmeval: unknown command {name!r}\n\n{_usage(known)}", file=sys.stderr)
        return 2
    from rmeval.benchmarks.catalogue import import_target
    from rmeval.errors import RmevalError

    entry = import_target(known[name][0])
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
