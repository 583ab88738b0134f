"""`rmeval models`: the model registry as a table (name, adapter, parameters, GPUs, revision, fidelity fixture).

The parameter count is the entry's `parameters` (billions) when it states one, else read from the model's name
(`...-70B`, `...-7b`, `...-0.6B`), else unknown. The fixture column reads tests/fidelity_fixtures.yaml of the
source tree (registry name -> the test comparing the entry with its authors' code); a test named there that no
longer exists shows as missing. Shared: names no benchmark.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from rmeval.config_check import schema_default
from rmeval.models.catalogue import is_published
from rmeval.registry import ModelSpec, load_registry

FIXTURE_INDEX = Path(__file__).resolve().parents[2] / "tests" / "fidelity_fixtures.yaml"
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)[bB](?![A-Za-z0-9])")


@dataclass(frozen=True)
class Row:
    name: str
    adapter: str
    parameters: str
    gpus: str
    revision: str
    fixture: str


def parameters(spec: ModelSpec) -> str:
    """`70B` from the entry's `parameters`, else `~70B (name)` read from its name or path, else `?`."""
    if spec.parameters is not None:
        return f"{spec.parameters:g}B"
    for text in (spec.name, spec.path):
        found = _SIZE.findall(text.replace("_", "-"))
        if found:
            return f"{found[-1]}B (name)"
    return "?"


def fixture_index(path: Path = FIXTURE_INDEX) -> dict[str, str | None] | None:
    """Registry name -> `tests/file.py::test_name` (None: none); None when the source tree's tests are absent."""
    if not path.is_file():
        return None
    from rmeval.io.yaml_io import load_yaml

    return dict(load_yaml(path.read_text(encoding="utf-8")) or {})


def fixture_status(name: str, index: dict[str, str | None] | None, root: Path = FIXTURE_INDEX.parents[1]) -> str:
    if index is None:
        return "unknown (no tests/ here)"
    test = index.get(name)
    if not test:
        return "no"
    file, _, function = test.partition("::")
    source = root / file
    if not source.is_file() or f"def {function}(" not in source.read_text(encoding="utf-8"):
        return f"missing ({test})"
    return f"yes ({test})"


def rows(registry: dict[str, ModelSpec], index: dict[str, str | None] | None) -> list[Row]:
    out = []
    for name, spec in registry.items():
        remote, weightless = spec.adapter_entry.remote, spec.adapter_entry.weightless
        published = is_published(spec)
        out.append(Row(
            name=name,
            adapter=spec.adapter,
            parameters="none (published results)" if published else "none (baseline)" if weightless
            else parameters(spec),
            gpus="0 (remote)" if remote else "0 (no weights)" if weightless else str(spec.resources.gpu),
            revision=spec.revision or (published_pin(spec) if published else "n/a (endpoint)" if remote
                                       else "n/a (a rule)" if weightless else "main (pinned by the lock)"),
            fixture=fixture_status(name, index),
        ))
    return out


def published_pin(spec: ModelSpec) -> str:
    """A published entry's pin (`options.commit` / `options.revision`), or what it is without one."""
    options = spec.options
    return str(options.get("commit") or options.get("revision") or f"n/a ({options.get('source')} file)")


def render(table: list[Row]) -> str:
    from rmeval.tables import markdown_escape, markdown_table

    headers = ["model", "adapter", "parameters", "GPUs", "revision", "fidelity fixture"]
    cells = [[markdown_escape(str(value)) for value in (r.name, r.adapter, r.parameters, r.gpus, r.revision, r.fixture)]
             for r in table]
    return markdown_table("", headers, [False, False, True, True, False, False], cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rmeval models", description=__doc__.splitlines()[0])
    parser.add_argument("--registry", default=schema_default("registry"), help="the model registry (YAML)")
    args = parser.parse_args(argv)
    print(render(rows(load_registry(args.registry), fixture_index())), end="")
    return 0
