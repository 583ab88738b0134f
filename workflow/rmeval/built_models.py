"""The local model folders a run builds itself (config `tiny_models`: folder -> {seed, kind}), with
`rmeval tiny-model` in rule `tiny_model` (workflow/rules/download.smk): the demo's models (config/demo.yaml).

A model entry whose `path` names such a folder is scored like any local folder; preflight does not ask for the
folder (the run writes it), the weights stage waits for it, and the run summary's first line says that the
rewards come from random weights. A folder `rmeval tiny-model` wrote by hand says so in its card (TINY_CARD): its
model's rewards are random too, and the run says so the same way. Light (no torch): the Snakefile imports it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.registry import ModelSpec

TINY_CARD = "rmeval_tiny.json"  # what `rmeval tiny-model` writes beside the weights: they are random


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


def recorded_random(spec: ModelSpec) -> bool:
    """Whether `spec` loads a local folder whose card says `rmeval tiny-model` wrote it (random weights)."""
    if not spec.path or not spec.adapter_entry.loads_model:
        return False
    return (Path(os.path.expanduser(spec.path)) / TINY_CARD).is_file()


def random_weight_models(specs: Mapping[str, ModelSpec], built: Mapping[str, BuiltModel]) -> list[str]:
    """The models whose rewards mean nothing: built at random by the run, or from a folder `rmeval tiny-model`
    wrote (its card)."""
    return [name for name, spec in specs.items() if built_folder(spec, built) is not None or recorded_random(spec)]
