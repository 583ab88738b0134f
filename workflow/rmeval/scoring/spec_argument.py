"""`--spec`, as `rmeval score` and `rmeval download-model` take it: a registry entry as JSON, or `@file.json`; from
`--settings` also the entry itself (a JSON object)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec, spec_from_mapping


def read_spec(text: str | Mapping[str, Any]) -> ModelSpec:
    if isinstance(text, Mapping):
        return spec_from_mapping(dict(text), where="--spec: model")
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise RmevalError(f"--spec: file not found: {path}")
        text = path.read_text()
    return ModelSpec.from_json(text)
