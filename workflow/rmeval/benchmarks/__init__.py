"""The benchmarks rmeval runs. Each is one package here with a `catalogue` module declaring a `BENCHMARK`
(rmeval.benchmarks.catalogue.Benchmark) and one rule file; adding a benchmark adds one line below."""

from __future__ import annotations

import importlib

from rmeval.benchmarks.catalogue import Benchmark

# name -> the module that declares it (imported lazily: the catalogues are import-free, the packages are not).
BENCHMARK_MODULES: dict[str, str] = {
    "fairness": "rmeval.benchmarks.fairness.catalogue",
    "rewardmath": "rmeval.benchmarks.rewardmath.catalogue",
}


def benchmark(name: str) -> Benchmark:
    if name not in BENCHMARK_MODULES:
        raise KeyError(f"unknown benchmark {name!r}; known: {sorted(BENCHMARK_MODULES)}")
    return importlib.import_module(BENCHMARK_MODULES[name]).BENCHMARK


def all_benchmarks() -> list[Benchmark]:
    return [benchmark(name) for name in BENCHMARK_MODULES]
