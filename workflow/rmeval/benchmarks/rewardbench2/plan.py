"""RewardBench 2's planner: the `rewardbench` package's, for version 2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rmeval.run_plan import BenchmarkPlan, PlanContext


def plan(config: Mapping[str, Any], context: PlanContext) -> BenchmarkPlan:
    from rmeval.benchmarks.rewardbench.plan import plan_version
    from rmeval.benchmarks.rewardbench.versions import V2

    return plan_version(V2, config, context)
