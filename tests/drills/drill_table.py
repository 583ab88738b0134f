"""Run the reliability drills and print the drill table with its totals.

    python tests/drills/drill_table.py [extra pytest args, e.g. -k kill]
    python tests/drills/drill_table.py --from RECORD.json   # print the table of a run already made
                                                          # (pytest with RMEVAL_DRILL_RECORD=RECORD.json)

Each drill records what it injected and what must happen (tests/drills/conftest.py); the pytest outcome
decides the result. Exits with pytest's status, so CI can run this script instead of plain pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]


def run_drills(extra: list[str]) -> tuple[int, list[dict]]:
    with tempfile.TemporaryDirectory(prefix="rmeval-drills-") as folder:
        record = Path(folder) / "drills.json"
        env = {**os.environ, "RMEVAL_DRILL_RECORD": str(record)}
        command = [sys.executable, "-m", "pytest", str(HERE), "-q", "-p", "no:cacheprovider", *extra]
        status = subprocess.run(command, cwd=REPO_ROOT, env=env, check=False).returncode
        rows = json.loads(record.read_text()) if record.exists() else []
    return status, rows


def _cell(text: str, width: int = 110) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def totals(rows: list[dict]) -> dict[str, int]:
    faults = [r for r in rows if r["kind"] == "fault"]
    inputs = [r for r in rows if r["kind"] == "input"]
    return {
        "faults injected": sum(r["tried"] for r in faults),
        "faults survived": sum(r["tried"] for r in faults if r["result"] == "survived"),
        "bad inputs tried": sum(r["tried"] for r in inputs),
        "rejected with a clear message": sum(r["tried"] for r in inputs if r["result"] == "rejected"),
        "odd but valid inputs handled as documented": sum(r["tried"] for r in inputs if r["result"] == "handled"),
        "known gaps (strict xfail, fix named)": sum(r["tried"] for r in rows if r["result"].startswith("GAP")),
        "failed": sum(r["tried"] for r in rows if r["result"] in ("FAILED", "XPASS")),
        "rows lost": sum(r["rows_lost"] for r in rows),
    }


def render(rows: list[dict]) -> str:
    lines = ["| # | drill | injected | expected behaviour | result | rows lost |", "|---|---|---|---|---|---|"]
    for number, row in enumerate(rows, 1):
        result = row["result"] + (f" ({row['detail']})" if row["detail"] and row["result"] != "FAILED" else "")
        if row["tried"] > 1:
            result += f" [{row['tried']} cases]"
        lines.append(f"| {number} | {_cell(row['drill'], 60)} | {_cell(row['injected'])} | {_cell(row['expected'])} "
                     f"| {_cell(result, 160)} | {row['rows_lost']} |")
    lines += ["", "| total | count |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in totals(rows).items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--from"] and len(argv) == 2:
        record = Path(argv[1])
        if not record.exists():
            print(f"no drill record at {record}: did the drills run?", file=sys.stderr)
            return 1
        status, rows = 0, json.loads(record.read_text())
    else:
        status, rows = run_drills(argv)
    print()
    print(render(rows) if rows else "no drill rows were recorded")
    counts = totals(rows)
    if counts["rows lost"]:
        print(f"\nERROR: {counts['rows lost']} rows lost", file=sys.stderr)
        return status or 1
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
