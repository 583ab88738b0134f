"""Models follow a lock: a locked hub commit replaces `revision: null`, and every scoring job checks, after
loading and before scoring, that it loaded the locked commit (or local folder fingerprint)."""

from __future__ import annotations

import dataclasses
import sys

from rmeval.errors import RmevalError
from rmeval.lock.lockfile import Lock
from rmeval.registry import ModelSpec


def follow_lock(specs: dict[str, ModelSpec], lock: Lock | None) -> tuple[dict[str, ModelSpec], dict[str, str]]:
    """(specs with locked commits, model name -> revision each job must load). No lock: unchanged, {}."""
    if lock is None:
        return specs, {}
    followed: dict[str, ModelSpec] = {}
    expected: dict[str, str] = {}
    for name, spec in specs.items():
        locked = lock.models.get(name)
        if locked is None:
            print(f"warning: lock: model {name!r} is not in the lock; it runs unpinned", file=sys.stderr)
            followed[name] = spec
            continue
        if locked.adapter != spec.adapter:
            raise RmevalError(f"model {name!r}: the lock has adapter {locked.adapter!r}, the config {spec.adapter!r}")
        check_locked_attn(name, locked.extra.get("attn_implementation"), spec.attn_implementation)
        followed[name] = spec
        if locked.revision.startswith("unresolved"):
            print(f"warning: lock: model {name!r} was locked without a resolved commit; it runs unpinned",
                  file=sys.stderr)
            continue
        if locked.is_hub and spec.revision is None:
            followed[name] = dataclasses.replace(spec, revision=locked.revision)  # the lock's commit wins over null
        expected[name] = locked.revision
    return followed, expected


def check_loaded_revision(model: str, expected: str | None, loaded: object, found: str = "loaded") -> None:
    """Fail before scoring when the loaded (or, before loading, the `found`) commit / fingerprint is not the
    locked one."""
    if expected and str(loaded) != expected:
        raise RmevalError(
            f"model {model!r}: {found} revision {loaded} but the lock says {expected}; the model (folder or hub "
            "commit) changed after locking. Restore it, or drop `lock:` from the config to score the new one"
        )


def check_locked_attn(model: str, locked: object, requested: str) -> None:
    """Stop when the entry asks for another attention kernel than the locked run loaded (the rewards would differ,
    as with another commit). A lock written before the field existed, or a remote model, has none: no check."""
    if locked is None:
        return
    if isinstance(locked, dict):  # per table; one model loads one kernel, so they agree unless the lock is edited
        values = sorted({str(value) for value in locked.values()})
        locked = values[0] if len(values) == 1 else ", ".join(values)
    if str(locked) != requested:
        raise RmevalError(
            f"model {model!r}: attn_implementation {requested!r} but the lock says {locked}; the locked run loaded "
            f"that kernel. Set the entry's `attn_implementation: {locked}`, or drop `lock:` from the config to "
            "score with the new one"
        )


def check_loaded_attn(spec: ModelSpec, loaded: object) -> None:
    """Fail before scoring when the model did not load the kernel its entry asks for (and a lock, checked against
    the entry when the run was planned, recorded): the rewards would not be the entry's. Remote models load none."""
    if loaded is not None and str(loaded) != spec.attn_implementation:
        raise RmevalError(f"model {spec.name!r}: loaded attn_implementation {loaded} but the entry asks for "
                          f"{spec.attn_implementation!r}; transformers replaced the kernel")
