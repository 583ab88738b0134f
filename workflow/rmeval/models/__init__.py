"""Reward-model adapters: one module per registry `adapter`, listed in rmeval.models.catalogue, loaded lazily."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rmeval.errors import RmevalError

if TYPE_CHECKING:
    from rmeval.models.base import RewardScorer, Runtime
    from rmeval.models.catalogue import Adapter
    from rmeval.registry import ModelSpec


def scorer_class(entry: Adapter) -> type[RewardScorer]:
    """The RewardScorer class a catalogue entry names (imports its module)."""
    module_name, _, class_name = entry.scorer.partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def load_scorer(spec: ModelSpec, runtime: Runtime) -> RewardScorer:
    """Instantiate the adapter named by `spec.adapter` (loads the model), once its options fit the catalogue."""
    entry = spec.adapter_entry
    problems = entry.option_problems(spec.options)
    if problems:
        raise RmevalError(f"model {spec.name!r}: " + "; ".join(problems))
    if spec.engine_name == "vllm":  # the adapter's input, a vLLM server's forward passes (the registry checked it)
        from rmeval.vllm_engine.scorer import VllmScorer

        return VllmScorer(spec, runtime)
    return scorer_class(entry)(spec, runtime)
