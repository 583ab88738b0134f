"""What a benchmark's run-level provider is given (`RunContext`), and the options the run-level commands share.

A provider ("module:function" in its catalogue: `summary_section`, `reproduction`) reads only its own benchmark's
files (`context.path(key)`), the run-level files (`context.run_path(key)`), its published-values files, the run's
alpha and its options (`Benchmark.run_settings`, taken from the config by the rule).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rmeval.benchmarks as benchmarks
from rmeval.benchmarks.catalogue import Benchmark
from rmeval.errors import RmevalError

# resources/published/ and the other repository files a benchmark names are relative to the repository.
REPOSITORY = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class RunContext:
    benchmark: Benchmark
    root: Path  # the run directory: catalogued paths are relative to it
    alpha: float  # the run's significance level (stats.alpha): every verdict and summary sentence uses it
    options: Mapping[str, Any] = field(default_factory=dict)  # its run_settings, by option name
    published: tuple[Path, ...] = ()  # its published-values files

    def path(self, key: str) -> Path:
        """One of this benchmark's catalogued files, in this run."""
        return self.root / self.benchmark.get(key).path

    def run_path(self, key: str) -> Path:
        """A run-level output (rmeval.run_outputs.catalogue), in this run."""
        from rmeval.run_outputs.catalogue import RUN

        return self.root / RUN.get(key).path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every run-level command takes (the rule passes them as one --settings JSON)."""
    from rmeval.config_check import schema_default

    parser.add_argument("--benchmarks", required=True, nargs="+", choices=list(benchmarks.catalogue()),
                        help="the run's enabled benchmarks, in catalogue order")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the run directory its files are read from (default: the working directory)")
    parser.add_argument("--alpha", type=float, default=schema_default("stats.alpha"),
                        help="significance level of every verdict and summary sentence (default: stats.alpha's)")
    parser.add_argument("--options", type=json.loads, default={},
                        help='JSON {"<benchmark>": {"<option>": value}}: its run_settings (catalogue), each one not '
                             "given at its config key's default")


def benchmark_options(bench: Benchmark, given: Mapping[str, Any]) -> dict[str, Any]:
    """Its declared options: given ones, the others at their config key's schema default."""
    from rmeval.config_check import schema_default

    unknown = sorted(set(given) - set(bench.run_settings))
    if unknown:
        raise RmevalError(f"--options: {bench.name}: unknown option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(bench.run_settings)) or 'none'}")
    return {option: given[option] if option in given else schema_default(key)
            for option, key in bench.run_settings.items()}


def contexts(args: argparse.Namespace, provider: str,
             published: Mapping[str, Sequence[Path]] | None = None) -> list[tuple[Benchmark, RunContext]]:
    """(benchmark, context) of every named benchmark that has the `provider` field set, in the order given."""
    if not 0.0 < args.alpha < 1.0:
        raise RmevalError(f"--alpha: {args.alpha} is not in (0, 1)")
    if not isinstance(args.options, dict):
        raise RmevalError(f"--options: expected a JSON object, got {args.options!r}")
    stray = sorted(set(args.options) - set(args.benchmarks))
    if stray:
        raise RmevalError(f"--options: {', '.join(stray)} is not among --benchmarks ({', '.join(args.benchmarks)})")
    chosen = []
    for name in dict.fromkeys(args.benchmarks):
        bench = benchmarks.benchmark(name)
        if getattr(bench, provider) is None:
            continue
        options = benchmark_options(bench, args.options.get(name) or {})
        files = (published or {}).get(name)
        if files is None:
            files = [REPOSITORY / path for path in bench.published]
        chosen.append((bench, RunContext(bench, args.root, args.alpha, options, tuple(files))))
    return chosen
