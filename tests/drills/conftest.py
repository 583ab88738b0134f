"""The drill recorder: each drill describes what it injected and what must happen; the outcome of the test
decides the result. With `$RMEVAL_DRILL_RECORD` set, the rows are written there as JSON (drill_table.py)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

# drill_helpers.py lives here; tests/conftest.py already put tests/ (workflow_helpers.py) on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

KINDS = ("fault", "input")  # a fault injected into a run / a bad input given to the product
# What a passing drill shows: a fault survived, a bad input rejected with a clear message, or an odd but
# valid input accepted and handled as documented (TeX titles, 100 kB abstracts, omitted optional keys).
OUTCOMES = {"survive": "survived", "reject": "rejected", "accept": "handled"}


@dataclass
class DrillRow:
    test: str
    drill: str
    kind: str
    injected: str
    expected: str
    tried: int = 1  # faults injected or bad inputs given by this drill
    outcome: str = "survive"  # survive | reject | accept: what passing means
    rows_lost: int = 0
    result: str = "not run"
    detail: str = ""


class Recorder:
    def __init__(self, test: str) -> None:
        self.test = test
        self.rows: list[DrillRow] = []

    def __call__(self, drill: str, kind: str, injected: str, expected: str, tried: int = 1,
                 outcome: str | None = None) -> DrillRow:
        assert kind in KINDS, kind
        outcome = outcome or ("survive" if kind == "fault" else "reject")
        assert outcome in OUTCOMES, outcome
        row = DrillRow(self.test, drill, kind, injected, expected, tried, outcome)
        self.rows.append(row)
        return row


_ALL_ROWS: list[DrillRow] = []


@pytest.fixture
def drill(request: pytest.FixtureRequest) -> Recorder:
    recorder = Recorder(request.node.nodeid)
    request.node._drill_recorder = recorder
    return recorder


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    recorder: Recorder | None = getattr(item, "_drill_recorder", None)
    if recorder is None:
        return report
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            result = "GAP (xfail)" if report.skipped else "XPASS"
            detail = report.wasxfail
        else:
            result = {"passed": "survived", "failed": "FAILED", "skipped": "skipped"}[report.outcome]
            detail = str(report.longrepr)[-300:] if report.outcome != "passed" else ""
        for row in recorder.rows:
            row.result = OUTCOMES[row.outcome] if result == "survived" else result
            row.detail = row.detail or detail
        _ALL_ROWS.extend(r for r in recorder.rows if r not in _ALL_ROWS)
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    # Under pytest-xdist every process ends its session here; the drills all run in one worker (xdist group
    # "drills", tests/conftest.py), so only that one has rows: the others must not overwrite its record.
    target = os.environ.get("RMEVAL_DRILL_RECORD")
    if target and _ALL_ROWS:
        Path(target).write_text(json.dumps([asdict(r) for r in _ALL_ROWS], indent=1))
