"""The package's imports run one way: no module of rmeval imports, directly or through others, a module that
imports it. Counted from the source (ast), every `import` of an rmeval module: at module level, under
`if TYPE_CHECKING:` and inside functions alike, since a circle through any of them means two modules that cannot be
understood, moved or tested apart (issue 39 found two: stats/analysis <-> stats/builders, models/base <-> tasks)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "workflow"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in (PACKAGE_ROOT / "rmeval").rglob("*.py"):
        parts = path.relative_to(PACKAGE_ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imported(path: Path, module: str, known: set[str]) -> set[str]:
    """The rmeval modules `module` imports anywhere in its source (a `from package import name` counts both the
    package and, where it is a module, `package.name`)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name in known and name != module}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_the_cycle_finder_finds_a_circle_through_a_third_module() -> None:
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_package_imports_itself_through_others() -> None:
    modules = _modules()
    assert "rmeval.tasks" in modules and "rmeval.benchmarks.fairness.stats.analysis" in modules
    graph = {name: _imported(path, name, set(modules)) for name, path in modules.items()}
    assert "rmeval.tasks" in graph["rmeval.models.base"], "the walk must see imports under TYPE_CHECKING"
    assert import_cycles(graph) == []
