"""The lock's format: dataclasses, a deterministic YAML writer and a reader whose errors name the key.

A paper is one string `<id><version> <row hash>`: `2104.12255v2 5d41402abc4b`. The row hash is the first 12 hex
digits of the sha256 of the paper's row in the group table (the line `content_sha256` hashes), so a rebuild can
name the papers whose text changed even when their version did not.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.io.hashing import sha256_text

LOCK_FORMAT = 1
ROW_HASH_DIGITS = 12
HEADER = (
    "# rmeval lock: exactly what this run used (arXiv papers with versions, model commits, software).\n"
    "# Rerun it: `lock: <this file>` and `arxiv.source: lock` in a config (README, \"Reproduce our run\").\n"
)
_PAPER = re.compile(r"^(?P<id>\S+?)(?P<version>v\d+)? (?P<row>[0-9a-f]{" + str(ROW_HASH_DIGITS) + r"})$")


@dataclass(frozen=True)
class LockedPaper:
    id: str  # without version
    version: str  # 'v2'; '' when the source recorded none
    row_sha: str  # first ROW_HASH_DIGITS hex digits of the row's sha256

    @property
    def versioned_id(self) -> str:
        return f"{self.id}{self.version}"

    def entry(self) -> str:
        return f"{self.versioned_id} {self.row_sha}"

    @classmethod
    def parse(cls, text: object, where: str) -> LockedPaper:
        match = _PAPER.match(text) if isinstance(text, str) else None
        if match is None:
            raise RmevalError(f"{where}: expected '<arXiv id><version> <{ROW_HASH_DIGITS} hex digits>', got {text!r}")
        return cls(match["id"], match["version"] or "", match["row"])


@dataclass(frozen=True)
class GroupLock:
    name: str
    categories: tuple[str, ...]
    table_sha256: str  # content_sha256 of the group table (rmeval.benchmarks.fairness.arxiv.select), independent of the parquet writer
    papers: tuple[LockedPaper, ...]  # in table order

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": list(self.categories),
            "rows": len(self.papers),
            "table_sha256": self.table_sha256,
            "papers": [paper.entry() for paper in self.papers],
        }


@dataclass(frozen=True)
class ModelLock:
    name: str
    adapter: str
    path: str
    revision: str  # the hub commit loaded, a local folder's fingerprint, or `api:<model>`
    dtype: str
    # Optional fields a meta sidecar may carry (template_hash, prompt_hash, ...): a value, or {table: value}.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_hub(self) -> bool:
        return not self.revision.startswith(("local-sha256:", "api:", "unresolved"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "path": self.path,
            "revision": self.revision,
            "dtype": self.dtype,
            **{key: self.extra[key] for key in sorted(self.extra)},
        }


@dataclass(frozen=True)
class Lock:
    rmeval: str
    software: dict[str, Any]
    config_sha256: str
    arxiv: dict[str, Any]
    groups: dict[str, GroupLock]
    models: dict[str, ModelLock]

    def to_dict(self) -> dict[str, Any]:
        return {
            "lock_format": LOCK_FORMAT,
            "rmeval": self.rmeval,
            "software": {key: self.software[key] for key in sorted(self.software)},
            "config_sha256": self.config_sha256,
            "arxiv": self.arxiv,
            "groups": {name: group.to_dict() for name, group in self.groups.items()},
            "models": {name: self.models[name].to_dict() for name in sorted(self.models)},
        }

    def to_yaml(self) -> str:
        import yaml

        body = yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False, allow_unicode=True,
                              width=120)
        return HEADER + body

    def sha256(self) -> str:
        return sha256_text(self.to_yaml())


def config_sha256(config: dict[str, Any]) -> str:
    """Hash of the resolved config (what Snakemake saw, overrides included), canonical JSON."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return sha256_text(text)


def _require(mapping: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise RmevalError(f"{where}: missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise RmevalError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def parse_lock(document: Any, where: str) -> Lock:
    if not isinstance(document, dict):
        raise RmevalError(f"{where}: not a lock (expected a mapping)")
    fmt = document.get("lock_format")
    if fmt != LOCK_FORMAT:
        raise RmevalError(f"{where}: lock_format {fmt!r} is not {LOCK_FORMAT} (written by another rmeval version?)")
    groups: dict[str, GroupLock] = {}
    for name, raw in (_require(document, "groups", dict, where)).items():
        at = f"{where}: groups.{name}"
        papers = tuple(
            LockedPaper.parse(text, f"{at}.papers[{index}]")
            for index, text in enumerate(_require(raw, "papers", list, at))
        )
        rows = _require(raw, "rows", int, at)
        if rows != len(papers):
            raise RmevalError(f"{at}: rows is {rows} but papers lists {len(papers)}")
        groups[str(name)] = GroupLock(
            str(name),
            tuple(str(c) for c in _require(raw, "categories", list, at)),
            _require(raw, "table_sha256", str, at),
            papers,
        )
    models: dict[str, ModelLock] = {}
    for name, raw in (document.get("models") or {}).items():
        at = f"{where}: models.{name}"
        known = {"adapter", "path", "revision", "dtype"}
        models[str(name)] = ModelLock(
            str(name),
            _require(raw, "adapter", str, at),
            _require(raw, "path", str, at),
            _require(raw, "revision", str, at),
            _require(raw, "dtype", str, at),
            {key: value for key, value in raw.items() if key not in known},
        )
    return Lock(
        rmeval=str(document.get("rmeval", "")),
        software=dict(document.get("software") or {}),
        config_sha256=str(document.get("config_sha256", "")),
        arxiv=dict(document.get("arxiv") or {}),
        groups=groups,
        models=models,
    )


def load_lock(path: str | Path) -> Lock:
    import yaml

    from rmeval.io.yaml_io import load_yaml

    path = Path(path)
    if not path.is_file():
        raise RmevalError(f"lock file not found: {path} (config key `lock`)")
    try:
        document = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise RmevalError(f"{path}: not valid YAML: {error}") from error
    return parse_lock(document, str(path))

