"""Shared by the perf scripts that time real Snakemake runs: the CPU's name, one timed Snakemake invocation, and the
config of a fairness run on a snapshot (the e2e scenario's settings: .test/fairness/config.yaml)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]


def cpu_name() -> str:
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def snakemake(workdir: Path, configfile: Path, targets: list[str], cores: int) -> float:
    """Wall seconds of `snakemake TARGETS` in `workdir`, offline; exits with its output tail on failure."""
    command = [sys.executable, "-m", "snakemake", *targets, "-s", str(REPO_ROOT / "Snakefile"), "--directory",
               str(workdir), "--configfile", str(configfile), "--cores", str(cores)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("RMEVAL_BENCH_RUN", None)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"snakemake failed in {workdir}:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}")
    return wall


def write_config(path: Path, snapshot: Path, models: list[dict[str, Any]], papers_per_group: int = 30,
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    from workflow_helpers import PAPER_GROUPS

    config: dict[str, Any] = {
        "groups": PAPER_GROUPS,
        "arxiv": {"source": "snapshot", "snapshot": str(snapshot), "papers_per_group": papers_per_group, "seed": 0},
        "registry": str(REPO_ROOT / "config" / "models.yaml"),
        "models": models,
        "reference_model": None,
        "scoring": {"threads": 1},
        "stats": {"bootstrap": 200, "permutations": 200, "seed": 0},
    }
    config.update(extra or {})
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return config


def prepare_snapshot(root: Path, abstracts: Path, papers: int) -> Path:
    """A Kaggle-format snapshot of the benchmark abstracts under `root` (enough papers per group for `papers`),
    written from a link to the abstracts file laid out as the shared data is."""
    import _models
    from workflow_helpers import write_kaggle_snapshot

    shared = root / "shared"
    (shared / "arxiv").mkdir(parents=True, exist_ok=True)
    link = shared / "arxiv" / _models.ABSTRACTS_FILE.split("/")[-1]
    if not link.exists():
        link.symlink_to(abstracts.resolve())
    snapshot = root / "inputs" / "arxiv-metadata-oai-snapshot.json.gz"
    write_kaggle_snapshot(shared, snapshot, per_group=max(40, papers + 10))
    return snapshot


def stage_medians(times: dict[str, list[tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """stage -> (median wall s, median CPU s) over its rounds."""
    import statistics

    return {name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
            for name, runs in times.items()}


def print_stage_table(median: dict[str, tuple[float, float]], rounds: int) -> None:
    """A Markdown table of each stage's median wall and CPU seconds."""
    print(f"| stage | wall s (median of {rounds}) | CPU s |\n|---|---:|---:|")
    for name, (wall, cpu) in median.items():
        print(f"| {name} | {wall:.2f} | {cpu:.2f} |")
