"""Build small, real inputs for end-to-end workflow runs: a Kaggle-format arXiv snapshot made from the shared
papers, an inline tiny-model entry, and a snakemake runner (the scenarios of .test/ are in scenarios.py)."""

from __future__ import annotations

import functools
import gzip
import json
import os
import random
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import yaml
from snakemake_forkserver import run_snakemake_process

__all__ = ["run_snakemake_process"]  # every test's Snakemake runs go through it (tests/snakemake_forkserver.py)

REPO_ROOT = Path(__file__).resolve().parents[1]

# The paper's eight groups, exactly as the shipped paper config defines them.
PAPER_GROUPS: dict[str, list[str]] = yaml.safe_load((REPO_ROOT / "config" / "config.yaml").read_text())["groups"]


@contextmanager
def torch_threads_kept() -> Iterator[None]:
    """Around scoring run inside a test worker: `--threads` (JobRequest.threads) sets torch's thread count for the
    whole process, so the worker gets its own count back."""
    import torch

    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class RunOwner:
    """A `sleep` process standing in for a Snakemake run: its run id (rmeval.scoring.address) is what the run's
    scoring jobs share a model server under, and ending it ends the run (its servers exit)."""

    def __init__(self, seconds: int = 900) -> None:
        from rmeval.scoring.address import process_start_ticks

        self.process = subprocess.Popen(["sleep", str(seconds)])
        self.run_id = f"{self.process.pid}:{process_start_ticks(self.process.pid)}"

    def end(self) -> None:
        self.process.kill()
        self.process.wait()


def rmeval_in_process(args: Sequence[str]) -> int:
    """`rmeval ARGS` in this process: the CLI path without another interpreter start (torch is loaded here)."""
    from rmeval.cli import main

    with torch_threads_kept():
        return main(list(args))


@functools.cache
def merged_schema_file() -> Path:
    """The config schema with every benchmark's own sections merged in (rmeval.config_check.config_schema) as one
    self-contained file, for snakemake.utils.validate, which reads a schema from a path."""
    from rmeval.config_check import config_schema

    path = Path(tempfile.mkdtemp(prefix="rmeval-schema-")) / "config.schema.json"
    path.write_text(json.dumps(config_schema()))
    return path


def shared_data_dir() -> Path | None:
    """`$RMEVAL_SHARED_DATA`, else `../shared/data` beside the repository; None when absent."""
    candidates = [os.environ.get("RMEVAL_SHARED_DATA"), REPO_ROOT.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def _group_of_balanced_row(row: dict) -> str | None:
    archive = row["archive_group"]
    primary = row["primary_category"] or ""
    if archive == "eess":
        return "systems_science" if primary == "eess.SY" else "electrical_engineering"
    return {
        "physics": "physics", "math": "mathematics", "cs": "computer_science", "econ": "economics",
        "q-bio": "quantitative_biology", "q-fin": "quantitative_finance", "stat": "stat",
    }.get(archive)


def _kaggle_categories(row: dict) -> str:
    if row.get("categories_complete") and row.get("categories"):
        categories = list(row["categories"])
    else:
        categories = [row["primary_category"] or row["archive_group"]]
    # arXiv lists every eess.SY paper as "eess.SY cs.SY": keep that real-world alias pair in the test data.
    if categories == ["eess.SY"]:
        categories.append("cs.SY")
    return " ".join(categories)


def write_kaggle_snapshot(shared_data: Path, out: Path, per_group: int = 40, seed: int = 0) -> dict[str, int]:
    """Kaggle `arxiv-metadata-oai-snapshot` JSON lines (gzip) with `per_group` papers per paper group,
    plus a few `stat` papers that belong to no group. Returns the rows written per source group."""
    rows_by_group: dict[str, list[dict]] = {}
    with (shared_data / "arxiv" / "arxiv_balanced_by_archive_max500.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            group = _group_of_balanced_row(row)
            if group:
                rows_by_group.setdefault(group, []).append(row)
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as handle:
        for group, rows in sorted(rows_by_group.items()):
            chosen = rng.sample(rows, min(len(rows), 8 if group == "stat" else per_group))
            counts[group] = len(chosen)
            for row in chosen:
                record = {
                    "id": row["id"], "submitter": None, "authors": "", "title": row["title"],
                    "comments": None, "journal-ref": None, "doi": None, "report-no": None,
                    "categories": _kaggle_categories(row), "license": None, "abstract": " " + row["abstract"] + "\n",
                    "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
                    "update_date": "2023-01-01", "authors_parsed": [],
                }
                handle.write(json.dumps(record) + "\n")
    return counts


def tree_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder`: the hash of its bytes and its modification time (nothing touched = equal)."""
    import hashlib

    return {str(path.relative_to(folder)): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def tiny_model_entry(name: str, model_dir: Path) -> dict:
    return {"name": name, "path": str(model_dir), "adapter": "sequence-classification", "dtype": "float32",
            "max_length": 512, "resources": {"gpu": 0, "mem_mb": 2000, "runtime": 30}}


def workflow_argv(workdir: Path, configfile: Path, *args: str) -> list[str]:
    """`snakemake` arguments for this repository's workflow run in `workdir` with `configfile` (for
    run_snakemake_process, or after `python -m snakemake` for a run a test signals). Targets go after an option
    that ends `--configfile`'s list of files, e.g. `--cores N`."""
    return ["-s", str(REPO_ROOT / "Snakefile"), "--directory", str(workdir), "--configfile", str(configfile), *args]


def run_snakemake(workdir: Path, configfile: Path, *args: str, check: bool = True, timeout: float = 1200,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`snakemake` in `workdir` with the hub offline; `env` adds to (or overrides) this process's environment."""
    argv = workflow_argv(workdir, configfile, *args)
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
    result = run_snakemake_process(argv, env=full_env, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({result.returncode}): {' '.join(result.args)}\n"
            f"--- stdout ---\n{result.stdout[-6000:]}\n--- stderr ---\n{result.stderr[-10000:]}"
        )
    return result
