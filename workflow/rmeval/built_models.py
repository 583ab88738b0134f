"""The local model folders a run builds itself (config `tiny_models`: folder -> {seed, kind}), with
`rmeval tiny-model` in rule `tiny_model` (workflow/rules/download.smk): the demo's models (config/demo.yaml).

A model entry whose `path` names such a folder is scored like any local folder; preflight does not ask for the
folder (the run writes it), the weights stage waits for it, and the run summary's first line says that the
rewards come from random weights. Light (no torch): the Snakefile imports it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmeval.registry import ModelSpec


@dataclass(frozen=True)
class BuiltModel:
    folder: str  # normalised, relative to the working directory as written
    seed: int
    kind: str


def folder_key(path: str) -> str:
    """One spelling per folder: `./inputs/m/` and `inputs/m` are the same folder."""
    return os.path.normpath(os.path.expanduser(path))


def built_models(config: Mapping[str, Any]) -> dict[str, BuiltModel]:
    """The config's `tiny_models` (defaults filled by the schema), by normalised folder."""
    built = {}
    for folder, entry in (config.get("tiny_models") or {}).items():
        key = folder_key(folder)
        built[key] = BuiltModel(key, int(entry.get("seed", 0)), str(entry.get("kind", "classifier")))
    return built


def built_folder(spec: ModelSpec, built: Mapping[str, BuiltModel]) -> BuiltModel | None:
    """The folder a rule of this run builds for `spec`, if its path is one of them."""
    return built.get(folder_key(spec.path)) if spec.path else None


def random_models(specs: Mapping[str, ModelSpec], built: Mapping[str, BuiltModel]) -> list[str]:
    """The models (by name, in order) whose weights the run built at random."""
    return [name for name, spec in specs.items() if built_folder(spec, built) is not None]
