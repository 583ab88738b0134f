"""YAML reading: one loader for every file rmeval reads (schemas, the model registry, locks, judge prompts)."""

from __future__ import annotations

from typing import Any


def load_yaml(text: str) -> Any:
    """`yaml.safe_load` through libyaml's C parser when PyYAML has it (the same safe constructors, several times
    faster: the schemas and the registry are read at every Snakemake start and in every Slurm job)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
