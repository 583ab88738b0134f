"""Time each `.test/` scenario pipeline as the test suite runs it, and where its time goes, stage by stage.

Usage: python perf/scenario_costs.py [SCENARIO ...] [--keep DIR]   (default: every scenario the suite runs once)

Each scenario is prepared and run as its shared test fixture runs it (tests/conftest.py, tests/scenarios.py): the
fairness scenario with no network, the judged ones against the loopback judge server, `snakemake --cores 2`. Prints
per scenario its wall seconds and a Markdown table of its stages (perf/stage_costs.py: jobs, total and max wall
seconds, CPU seconds), the CPU named first, and one JSON line last. Run it on a quiet machine: the figures are wall
seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT / "perf"))

# What the suite runs of each scenario: its targets (none: `rule all`), and whether the loopback judge answers.
SCENARIOS: dict[str, dict] = {
    "fairness": {"offline": True},
    "both-branches": {"judge": "both"},
    "rewardbench": {"judge": "rewardbench2", "targets": "test_rewardbench_e2e:TARGETS"},
    "lock": {},
    "corpus-paired": {},
    "corpus-unpaired": {},
}


def _targets(spec: str | None) -> tuple[str, ...]:
    if not spec:
        return ()
    import importlib

    module, _, name = spec.partition(":")
    return tuple(getattr(importlib.import_module(module), name))


def run_one(name: str, root: Path) -> dict:
    from judge_server import JudgeServer
    from scenarios import (
        JUDGE_KEY_ENV,
        JUDGE_SECRET,
        NO_NETWORK_PROXY,
        TinyModels,
        judge_entries,
        run_scenario,
    )
    from stage_costs import stage_costs
    from workflow_helpers import shared_data_dir

    spec = SCENARIOS[name]
    tiny = TinyModels(root / "tiny-models")
    workdir = root / name
    env: dict[str, str] = {}
    if spec.get("offline"):
        env = {**NO_NETWORK_PROXY, "HF_HOME": str(workdir / "empty-hf-home")}
    with JudgeServer() as server:
        def to_this_server(config: dict) -> None:
            judges = judge_entries(config) if spec["judge"] == "both" else [
                m for m in config["rewardbench2"]["models"] if isinstance(m, dict)]
            for judge in judges:
                judge["options"]["base_url"] = server.base_url

        edit = to_this_server if spec.get("judge") else None
        if spec.get("judge"):
            env[JUDGE_KEY_ENV] = JUDGE_SECRET
        started = time.perf_counter()
        run = run_scenario(name, workdir, shared_data_dir(), tiny, *_targets(spec.get("targets")), env=env, edit=edit)
        wall = time.perf_counter() - started
    _, costs = stage_costs(run.results)
    return {"scenario": name, "wall_s": round(wall, 1), "snakemake_s": round(run.wall_seconds, 1), "stages": costs}


def main(argv: list[str]) -> int:
    from _runs import cpu_name

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help="default: all of them")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    args = parser.parse_args(argv)
    names = args.scenarios or list(SCENARIOS)
    print(f"CPU: {cpu_name()}\n")
    results = []
    with tempfile.TemporaryDirectory(prefix="rmeval-scenario-costs-") as scratch:
        root = args.keep or Path(scratch)
        for name in names:
            result = run_one(name, root)
            results.append(result)
            stages = sorted(result["stages"].items(), key=lambda item: -item[1]["total_s"])
            print(f"## {name}: {result['wall_s']:.1f} s (Snakemake {result['snakemake_s']:.1f} s)\n")
            print("| stage | jobs | total s | max s | CPU s |\n|---|---|---|---|---|")
            for stage, cost in stages:
                print(f"| {stage} | {cost['jobs']} | {cost['total_s']:.1f} | {cost['max_s']:.1f} | {cost['cpu_s']:.1f} |")
            print(flush=True)
    print(json.dumps({"cpu": cpu_name(), "scenarios": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
