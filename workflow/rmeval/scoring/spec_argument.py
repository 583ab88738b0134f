"""`--spec`, as `rmeval score` and `rmeval download-model` take it: a registry entry as JSON, or `@file.json`."""

from __future__ import annotations

from pathlib import Path

from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec


def read_spec(text: str) -> ModelSpec:
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise RmevalError(f"--spec: file not found: {path}")
        text = path.read_text()
    return ModelSpec.from_json(text)
