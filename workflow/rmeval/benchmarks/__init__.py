"""The benchmarks rmeval runs. Each is one package here with a `catalogue` module declaring a `BENCHMARK`
(rmeval.benchmarks.catalogue.Benchmark): adding a package adds the benchmark, with no line to add anywhere else.

Benchmarks outside this package (a lab's own, a test's) are named by their catalogue modules in
`RMEVAL_BENCHMARKS` (comma-separated, importable from the Python path). The catalogues are import-free, so finding
them all costs nothing at Snakefile parse time; they run in `order` (then name), which is the order of their
sections in the lock, the summary and the report.
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
from pathlib import Path

from rmeval.benchmarks.catalogue import Benchmark

EXTRA_ENV = "RMEVAL_BENCHMARKS"


def _catalogue_modules(extra: str) -> tuple[str, ...]:
    here = Path(__file__).parent
    found = [f"{__name__}.{info.name}.catalogue" for info in pkgutil.iter_modules([str(here)])
             if info.ispkg and (here / info.name / "catalogue.py").is_file()]
    found += [module.strip() for module in extra.split(",") if module.strip()]
    return tuple(found)


@functools.lru_cache(maxsize=8)
def _catalogue(extra: str) -> dict[str, Benchmark]:
    benchmarks: dict[str, Benchmark] = {}
    for module in _catalogue_modules(extra):
        try:
            declared = importlib.import_module(module).BENCHMARK
        except (ImportError, AttributeError) as error:
            raise ImportError(f"benchmark catalogue {module!r} ({EXTRA_ENV}?): {error}") from error
        if declared.name in benchmarks:
            raise ValueError(f"two benchmarks are named {declared.name!r} ({module})")
        benchmarks[declared.name] = declared
    return dict(sorted(benchmarks.items(), key=lambda item: (item[1].order, item[0])))


def catalogue() -> dict[str, Benchmark]:
    """name -> Benchmark, every benchmark found, in run order."""
    return _catalogue(os.environ.get(EXTRA_ENV, ""))


def benchmark(name: str) -> Benchmark:
    benchmarks = catalogue()
    if name not in benchmarks:
        raise KeyError(f"unknown benchmark {name!r}; known: {sorted(benchmarks)}")
    return benchmarks[name]


def all_benchmarks() -> list[Benchmark]:
    return list(catalogue().values())
