"""`rmeval published [BENCHMARK]`: the registry's published models (adapter `published`), for `rmeval run
--against NAME`: name, benchmark, the published model, where its file is and what pins it.

Shared: names no benchmark (a benchmark is a value of an entry's `options.benchmark`).
"""

from __future__ import annotations

import argparse

from rmeval.config_check import schema_default
from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec, load_registry


def published_entries(registry: dict[str, ModelSpec], benchmark: str | None = None) -> dict[str, ModelSpec]:
    from rmeval.models.catalogue import is_published

    return {name: spec for name, spec in registry.items()
            if is_published(spec) and (benchmark is None or spec.options.get("benchmark") == benchmark)}


def render(entries: dict[str, ModelSpec]) -> str:
    from rmeval.tables import markdown_escape, markdown_table

    headers = ["name", "benchmark", "published model", "source", "pin", "path", "leaderboard page"]
    cells = []
    for name, spec in entries.items():
        options = spec.options
        where = f"{options.get('repo')}" if options.get("repo") else "this machine"
        pin = options.get("commit") or options.get("revision") or "sha256 in the lock"
        cells.append([markdown_escape(str(value)) for value in
                      (name, options.get("benchmark"), options.get("model"), f"{options.get('source')} ({where})",
                       pin, options.get("path"), options.get("leaderboard", ""))])
    return markdown_table("", headers, [False] * len(headers), cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rmeval published", description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", nargs="?", help="only this benchmark's published models")
    parser.add_argument("--registry", default=schema_default("registry"), help="the model registry (YAML)")
    args = parser.parse_args(argv)
    registry = load_registry(args.registry)
    entries = published_entries(registry, args.benchmark)
    if not entries:
        known = sorted({str(spec.options.get("benchmark")) for spec in published_entries(registry).values()})
        raise RmevalError(f"{args.registry}: no published models{f' of {args.benchmark}' if args.benchmark else ''}; "
                          f"benchmarks with some: {', '.join(known) or 'none'}")
    print(render(entries), end="")
    print(f"\n{len(entries)} published model(s). Use one with `rmeval run --model ./my-rm --against NAME`.")
    return 0
