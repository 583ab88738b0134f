"""The test suite's time budget on the CI host (2 cores), in one place, and the record `.ci/run` keeps of it.

`.ci/run` times the fast tier, the README's test command and itself, and writes each figure here with
`python tests/suite_budget.py record KEY SECONDS --out FILE`; then tests/test_suite_budget.py (a fast-tier test that
skips where no record exists) reads FILE from `$RMEVAL_CI_DURATIONS` and fails when a figure exceeds its budget by
more than TOLERANCE. Wall seconds of whole runs, never of one test: one slow test moves them a little, the drift of
a whole suite moves them a lot.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
from _runs import cpu_name  # noqa: E402 - the one way this repository names a CPU (perf/_runs.py)

# Wall seconds on the CI host (issue 39): the README's test command, the fast tier (-m "not workflow"), the vLLM tier
# (-m vllm, issue 48: its own command, a vLLM server start per module) and all of .ci/run, the vLLM install included.
BUDGETS = {"suite_s": 12 * 60, "fast_tier_s": 90, "vllm_tier_s": 8 * 60, "ci_s": 25 * 60}
TOLERANCE = 1.25  # a run fails the check only past budget x this: hosts of one kind differ, and so do their loads
DURATIONS_ENV = "RMEVAL_CI_DURATIONS"


def over_budget(record: dict[str, float | str]) -> list[str]:
    """One line per recorded figure above its budget x TOLERANCE."""
    lines = []
    for key, budget in BUDGETS.items():
        seconds = record.get(key)
        if isinstance(seconds, (int, float)) and seconds > budget * TOLERANCE:
            lines.append(f"{key}: {seconds:.0f} s, over its budget of {budget} s by more than "
                         f"{100 * (TOLERANCE - 1):.0f} % (on {record.get('cpu', 'an unnamed CPU')}, "
                         f"{record.get('cores', '?')} cores)")
    return lines


def record(path: Path, key: str, seconds: float) -> dict[str, float | str]:
    """Add one figure to the record at `path` (created with the CPU's name and core count)."""
    import os

    if key not in BUDGETS:
        raise SystemExit(f"unknown figure {key!r}; known: {', '.join(BUDGETS)}")
    data = json.loads(path.read_text()) if path.is_file() else {"cpu": cpu_name(), "cores": os.cpu_count()}
    data[key] = round(seconds, 1)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("record", help="add one timed figure to the record")
    add.add_argument("key", choices=list(BUDGETS))
    add.add_argument("seconds", type=float)
    add.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    data = record(args.out, args.key, args.seconds)
    budget = BUDGETS[args.key]
    print(f"{args.key}: {args.seconds:.0f} s of a {budget} s budget ({100 * args.seconds / budget:.0f} %) on "
          f"{data['cpu']}, {data['cores']} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
