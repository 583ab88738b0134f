"""`rmeval lock diff A B`: what differs between two locks (software, the benchmarks' sections, commits)."""

from __future__ import annotations

from typing import Any

from rmeval.lock.lockfile import Lock
from rmeval.lock.section import section_providers

SHOWN_PER_KIND = 20


def scalar(label: str, a: Any, b: Any) -> list[str]:
    """One line when a value changed: `label: a -> b`."""
    return [] if a == b else [f"{label}: {a!r} -> {b!r}"]


def shown(kind: str, items: list[str]) -> list[str]:
    """Indented lines `kind: item`, at most SHOWN_PER_KIND and a count of the rest."""
    lines = [f"  {kind}: {item}" for item in items[:SHOWN_PER_KIND]]
    if len(items) > SHOWN_PER_KIND:
        lines.append(f"  {kind}: ... {len(items) - SHOWN_PER_KIND} more")
    return lines


def diff_locks(a: Lock, b: Lock) -> list[str]:
    lines = scalar("rmeval", a.rmeval, b.rmeval) + scalar("config_sha256", a.config_sha256, b.config_sha256)
    for key in sorted(set(a.software) | set(b.software)):
        lines += scalar(f"software.{key}", a.software.get(key), b.software.get(key))
    for name, provider in section_providers().items():
        first, second = a.section(name), b.section(name)
        if first is not None and second is not None:
            lines += provider.diff(first, second)
        elif first is not None or second is not None:
            lines.append(f"{', '.join(provider.keys)} ({name}): only in the {'first' if first is not None else 'second'} lock")
    for name in sorted(set(a.models) | set(b.models)):
        if name not in b.models:
            lines.append(f"model {name}: only in the first lock")
        elif name not in a.models:
            lines.append(f"model {name}: only in the second lock")
        else:
            da, db = a.models[name].to_dict(), b.models[name].to_dict()
            for key in sorted(set(da) | set(db)):
                lines += scalar(f"model {name}: {key}", da.get(key), db.get(key))
    return lines
