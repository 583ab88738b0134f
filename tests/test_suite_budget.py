"""The suite stays within its time budget (tests/suite_budget.py): `.ci/run` records the wall seconds of the fast
tier, the README's test command and itself, then runs this module with `$RMEVAL_CI_DURATIONS` naming the record.
Elsewhere (a developer's run, the fast tier inside .ci/run) there is no complete record and the check skips."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from suite_budget import BUDGETS, DURATIONS_ENV, TOLERANCE, over_budget, record


def test_a_figure_fails_only_past_its_budget_and_tolerance(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    for key, budget in BUDGETS.items():
        record(path, key, budget * TOLERANCE)  # at the edge: still within
    data = json.loads(path.read_text())
    assert set(BUDGETS) <= set(data) and data["cpu"] and data["cores"]
    assert over_budget(data) == []
    record(path, "fast_tier_s", BUDGETS["fast_tier_s"] * TOLERANCE + 1)
    [line] = over_budget(json.loads(path.read_text()))
    assert line.startswith("fast_tier_s: ") and f"budget of {BUDGETS['fast_tier_s']} s" in line and data["cpu"] in line


def test_the_suite_stays_within_its_budget_on_this_ci_run() -> None:
    path = os.environ.get(DURATIONS_ENV)
    if not path or not Path(path).is_file():
        pytest.skip(f"no durations recorded (${DURATIONS_ENV}): .ci/run records them and runs this check last")
    data = json.loads(Path(path).read_text())
    missing = sorted(set(BUDGETS) - set(data))
    if missing:
        pytest.skip(f"{path}: not yet recorded: {', '.join(missing)}")
    assert over_budget(data) == []
