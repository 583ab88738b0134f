"""Kills and interruptions: real processes, real SIGKILL, outputs compared byte for byte with a clean run;
a disk that fills up while scores are written."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from drill_helpers import AtomServer, api_block, drill_config, synthetic_papers
from rmeval.scoring.address import RUN_ENV
from workflow_helpers import (
    RunOwner,
    rmeval_in_process,
    run_snakemake_process,
    tiny_model_entry,
    workflow_argv,
)

FAULT_RUNNER = Path(__file__).resolve().parent / "fault_runner.py"
SCORE_ROWS = 40
ENGINE_FLAGS = ["--threads", "1", "--max-batch-rows", "4", "--checkpoint-every", "4", "--progress-every", "0"]


def _fairness_table(path: Path, rows: int = SCORE_ROWS) -> Path:
    papers = synthetic_papers(rows // 2, seed=5)
    pd.DataFrame({"id": [p.id for p in papers], "title": [p.title for p in papers],
                  "abstract": [p.abstract for p in papers], "categories": [" ".join(p.categories) for p in papers],
                  "group": "mixed"}).to_parquet(path)
    return path


def _spec_json(model_dir: Path) -> str:
    entry = tiny_model_entry("tiny", model_dir)
    return json.dumps(entry)


def _score_command(spec: str, data: Path, output: Path) -> list[str]:
    return [sys.executable, str(FAULT_RUNNER), "score", "--spec", spec, "--task", "fairness", "--input", str(data),
            "--output", str(output), *ENGINE_FLAGS]


def _env(**faults: str) -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **faults}


def _score_in_process(spec: str, data: Path, output: Path) -> int:
    """The same CLI in this process (no interpreter start)."""
    return rmeval_in_process(["score", "--spec", spec, "--task", "fairness", "--input", str(data), "--output",
                              str(output), *ENGINE_FLAGS])


@pytest.fixture(scope="module")
def clean_scores(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> tuple[Path, Path, str]:
    """One uninterrupted run of the scoring CLI: the reference every interrupted run must reproduce."""
    root = tmp_path_factory.mktemp("clean-scores")
    data = _fairness_table(root / "mixed.parquet")
    spec = _spec_json(tiny_model_dir)
    output = root / "clean" / "mixed.parquet"
    assert _score_in_process(spec, data, output) == 0
    return data, output, spec


def _rows_lost(reference: Path, candidate: Path) -> int:
    """Rows of the clean run that are missing from the candidate or differ in any column."""
    if not candidate.exists():
        return len(pd.read_parquet(reference))
    clean, other = pd.read_parquet(reference), pd.read_parquet(candidate)
    merged = clean.merge(other, how="left", on="id", suffixes=("", "_other"), indicator=True)
    lost = merged["_merge"] != "both"
    for column in ("reward", "n_tokens", "truncated"):
        lost |= merged[column] != merged[f"{column}_other"]
    return int(lost.sum())


@dataclass(frozen=True)
class LocalRun:
    """A local Snakemake run as its scoring jobs see it: the run id in their environment (rmeval.scoring.address),
    owned by a `sleep` that stands in for the Snakemake process, and its working directory. Its jobs share one
    model server, which ends with its owner."""

    env: dict[str, str]
    workdir: Path


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRun]:
    owner = RunOwner()
    try:
        yield LocalRun({RUN_ENV: owner.run_id}, tmp_path_factory.mktemp("run"))
    finally:
        owner.end()


def test_sigkill_of_a_scoring_job_at_three_random_points(clean_scores, local_run: LocalRun, tmp_path: Path,
                                                        drill) -> None:
    data, reference, spec = clean_scores
    rng = random.Random(20261130)
    # Kill points: after k checkpoint parts (cumulative across restarts) plus a random slice of a batch,
    # so a kill can land mid-request to the server, mid-checkpoint write or between batches.
    parts_total = SCORE_ROWS // 4
    targets = sorted(rng.sample(range(1, parts_total - 1), 3))
    extras = [round(rng.uniform(0.0, 0.3), 3) for _ in targets]
    row = drill("SIGKILL scoring job x3", "fault",
                f"SIGKILL of `rmeval score` (a local run's job, scoring through the run's model server) after "
                f"checkpoint parts {targets} (+{extras} s), rerun after each",
                "no final parquet while killed; the server serves every rerun; the last rerun resumes and is "
                "byte-identical to a clean run in one process", tried=3)
    output = tmp_path / "killed" / "mixed.parquet"
    partial = output.with_name("mixed.parquet.partial")
    run, workdir = local_run.env, local_run.workdir
    for target, extra in zip(targets, extras, strict=True):
        job = subprocess.Popen(_score_command(spec, data, output), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=_env(RMEVAL_DRILL_SLOW_S="0.15", **run), cwd=workdir)
        deadline = time.monotonic() + 180
        while len(list(partial.glob("part-*.parquet"))) < target:
            assert job.poll() is None, f"the job ended (rc {job.returncode}) before checkpoint part {target}"
            assert time.monotonic() < deadline, f"no checkpoint part {target} within 180 s"
            time.sleep(0.02)
        time.sleep(extra)
        os.kill(job.pid, signal.SIGKILL)
        job.wait()
        assert job.returncode == -signal.SIGKILL
        assert not output.exists(), "a killed job left a final parquet"
        assert not output.with_name("mixed.meta.json").exists(), "a killed job left a meta sidecar"
    result = subprocess.run(_score_command(spec, data, output), capture_output=True, text=True,
                            env=_env(**run), cwd=workdir, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "resuming from checkpoint" in result.stderr
    row.rows_lost = _rows_lost(reference, output)
    assert output.read_bytes() == reference.read_bytes(), "the resumed parquet differs from the clean run"
    meta = json.loads(output.with_name("mixed.meta.json").read_text())
    assert meta["rows"] == SCORE_ROWS and meta["resumed_rows"] >= 4 * targets[-1]
    # The server the first killed job started outlived all three kills and scored the rerun.
    assert not meta["model_server"]["started_by_this_job"] and meta["model_server"]["jobs_before"] >= 3
    assert not partial.exists()


@pytest.mark.parametrize(
    ("where", "pattern"),
    [("third checkpoint part", "part-00002.parquet.tmp"), ("final scores parquet", "mixed.parquet.tmp"),
     ("meta sidecar", "mixed.meta.json.tmp")],
    ids=["checkpoint", "scores", "meta"],
)
def test_disk_full_while_writing_scores(clean_scores, tmp_path: Path, where: str, pattern: str, drill,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from fault_runner import enospc_patches

    data, reference, spec = clean_scores
    row = drill(f"disk full: {where}", "fault",
                f"OSError(ENOSPC) after half of the {where} is written",
                "the job fails with ENOSPC naming the file; no truncated file under a final name; "
                "a rerun with space gives the clean bytes")
    output = tmp_path / "full" / "mixed.parquet"
    with monkeypatch.context() as patch:
        for owner, attribute, replacement in enospc_patches(pattern):
            patch.setattr(owner, attribute, replacement)
        status = _score_in_process(spec, data, output)
    # The CLI turns a full disk into one line naming the file and exit status 2, not a traceback.
    message = capsys.readouterr().err
    assert status == 2 and "No space left on device" in message and pattern in message, message
    # Whatever is left under a final name must be whole: the parquet only after a complete write.
    if output.exists():
        assert output.read_bytes() == reference.read_bytes(), "a truncated parquet was left as complete"
    meta = output.with_name("mixed.meta.json")
    assert not meta.exists(), "a meta sidecar was written for a failed job"
    for part in output.with_name("mixed.parquet.partial").glob("part-*.parquet"):
        pd.read_parquet(part)  # every checkpoint part under its final name is readable
    assert _score_in_process(spec, data, output) == 0
    row.rows_lost = _rows_lost(reference, output)
    assert output.read_bytes() == reference.read_bytes()
    assert json.loads(meta.read_text())["rows"] == SCORE_ROWS
    leftovers = sorted(p.name for p in output.parent.rglob("*.tmp"))
    assert not leftovers, f"temporary files left after the successful rerun: {leftovers}"


def test_disk_full_fails_the_cli_process_with_the_reason(clean_scores, local_run: LocalRun, tmp_path: Path) -> None:
    """The same fault in a real process, a job of the local run (its scores come from the run's model server):
    a non-zero exit whose stderr says why and where."""
    data, _, spec = clean_scores
    output = tmp_path / "mixed.parquet"
    result = subprocess.run(_score_command(spec, data, output), capture_output=True, text=True, cwd=local_run.workdir,
                            env=_env(RMEVAL_DRILL_ENOSPC="mixed.parquet.tmp", **local_run.env), timeout=300)
    assert result.returncode == 2 and not output.exists()
    assert "No space left on device" in result.stderr and "mixed.parquet.tmp" in result.stderr


# ----------------------------------------------------------------------------- snakemake master, arXiv API
DATA_TARGETS = ["results/data/mathematics.parquet", "results/data/economics.parquet"]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


DOWNLOAD_PAPERS = {"per_group": 12, "seed": 11}
DOWNLOAD_ARXIV = {"source": "api", "papers_per_group": 5, "seed": 0}


@pytest.fixture(scope="module")
def clean_download(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    """The reference for both kills: the same download, never interrupted (its own server, the same papers)."""
    clean_dir = tmp_path_factory.mktemp("clean-download")
    with AtomServer(synthetic_papers(**DOWNLOAD_PAPERS)) as server:
        config = clean_dir / "config.yaml"
        drill_config(config, [tiny_model_entry("tiny", tiny_model_dir)],
                     {**DOWNLOAD_ARXIV, "api": api_block(server.url, clean_dir / "cache")})
        clean = run_snakemake_process(workflow_argv(clean_dir, config, "--cores", "2", *DATA_TARGETS), timeout=300)
    assert clean.returncode == 0, clean.stderr[-4000:]
    return clean_dir


@pytest.mark.parametrize("victim", ["master", "process group"])
def test_sigkill_of_snakemake_during_the_arxiv_download(victim: str, tmp_path: Path, tiny_model_dir: Path,
                                                        clean_download: Path, drill) -> None:
    what = ("the snakemake master only (its fetch jobs run on as orphans)" if victim == "master"
            else "the snakemake master and its fetch jobs (the whole process group, as a pre-emption does)")
    row = drill(f"SIGKILL snakemake ({victim}) during arXiv download", "fault",
                f"SIGKILL of {what} once 2 API pages are cached",
                "no group data left; after `snakemake --unlock` the same command (--rerun-incomplete, as the "
                "profiles set) fetches only pages not cached; data identical to a clean run")
    models = [tiny_model_entry("tiny", tiny_model_dir)]
    clean_dir = clean_download
    with AtomServer(synthetic_papers(**DOWNLOAD_PAPERS), delay_s=0.4) as server:
        killed_dir = tmp_path / "killed"
        killed_cfg = killed_dir / "config.yaml"
        drill_config(killed_cfg, models, {**DOWNLOAD_ARXIV, "api": api_block(server.url, killed_dir / "cache")})

        master = subprocess.Popen([sys.executable, "-m", "snakemake",
                                   *workflow_argv(killed_dir, killed_cfg, "--cores", "2", *DATA_TARGETS)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 180
        while len(list((killed_dir / "cache").glob("*/start_*.json"))) < 2:
            assert master.poll() is None, "snakemake ended before the download was under way"
            assert time.monotonic() < deadline, "no cached page within 180 s"
            time.sleep(0.02)
        if victim == "master":
            os.kill(master.pid, signal.SIGKILL)
        else:
            os.killpg(master.pid, signal.SIGKILL)
        master.wait()
        assert not any((killed_dir / t).exists() for t in DATA_TARGETS), "a killed run left group data"
        while _group_alive(master.pid):  # orphaned fetch jobs (master-only kill) finish on their own
            assert time.monotonic() < deadline, "orphaned jobs still running after 180 s"
            time.sleep(0.1)
        cached_before = {p.relative_to(killed_dir / "cache") for p in (killed_dir / "cache").glob("*/start_*.json")}
        requests_at_rerun = len(server.requests)

        unlock = run_snakemake_process(workflow_argv(killed_dir, killed_cfg, "--unlock"), timeout=300)
        assert unlock.returncode == 0, unlock.stderr[-2000:]
        rerun = run_snakemake_process(workflow_argv(killed_dir, killed_cfg, "--cores", "2", "--rerun-incomplete",
                                                 *DATA_TARGETS), timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-4000:]
        rerun_requests = server.requests[requests_at_rerun:]
        killed_requests = server.requests[:requests_at_rerun]

    # Cached pages are reused: a page cached before the rerun is never fetched again.
    page_files = {p.relative_to(killed_dir / "cache") for p in (killed_dir / "cache").glob("*/start_*.json")}
    assert cached_before <= page_files
    assert len(rerun_requests) == len(page_files) - len(cached_before), (rerun_requests, cached_before)
    assert len(killed_requests) + len(rerun_requests) <= len(page_files) + 2, "at most the pages in flight twice"
    summaries = [json.loads((killed_dir / "results" / "arxiv" / f"{g}.fetch.json").read_text())
                 for g in ("mathematics", "economics")]
    assert sum(s["source"]["pages_from_cache"] for s in summaries) == len(cached_before)
    lost = 0
    for target in DATA_TARGETS:
        clean_frame, killed_frame = pd.read_parquet(clean_dir / target), pd.read_parquet(killed_dir / target)
        lost += len(set(clean_frame["id"]) - set(killed_frame["id"]))
        assert (killed_dir / target).read_bytes() == (clean_dir / target).read_bytes(), target
        manifests = [json.loads((d / target.replace(".parquet", ".manifest.json")).read_text())
                     for d in (clean_dir, killed_dir)]
        assert manifests[0]["output"]["content_sha256"] == manifests[1]["output"]["content_sha256"]
        assert manifests[0]["counts"] == manifests[1]["counts"]
    row.rows_lost = lost
