"""Reward-model adapters: one module per registry `adapter`, loaded lazily by name."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rmeval.errors import RmevalError
from rmeval.registry import ADAPTERS, API_ADAPTERS

if TYPE_CHECKING:
    from rmeval.models.base import RewardScorer, Runtime
    from rmeval.registry import ModelSpec

# adapter name -> (module, class); every name in rmeval.registry.ADAPTERS has an entry.
ADAPTER_CLASSES: dict[str, tuple[str, str]] = {
    "sequence-classification": ("rmeval.models.sequence_classification", "SequenceClassificationScorer"),
    "armorm": ("rmeval.models.armorm", "ArmoRMScorer"),
    "grm": ("rmeval.models.grm", "GRMScorer"),
    "eurus": ("rmeval.models.eurus", "EurusScorer"),
    "nemotron-api": ("rmeval.models.nemotron_api", "NemotronApiScorer"),
    "prm": ("rmeval.models.prm", "PRMScorer"),
    "judge": ("rmeval.models.judge", "JudgeScorer"),
}
LOCAL_ADAPTERS = tuple(name for name in ADAPTER_CLASSES if name not in API_ADAPTERS)

assert set(ADAPTER_CLASSES) == set(ADAPTERS), "registry.ADAPTERS and models.ADAPTER_CLASSES disagree"


def load_scorer(spec: ModelSpec, runtime: Runtime) -> RewardScorer:
    """Instantiate the adapter named by `spec.adapter` (loads the model)."""
    if spec.adapter not in ADAPTER_CLASSES:
        raise RmevalError(f"model {spec.name!r}: unknown adapter {spec.adapter!r}; known adapters: {sorted(ADAPTER_CLASSES)}")
    module_name, class_name = ADAPTER_CLASSES[spec.adapter]
    scorer_class = getattr(importlib.import_module(module_name), class_name)
    return scorer_class(spec, runtime)
