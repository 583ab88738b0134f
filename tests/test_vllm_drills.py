"""Failure drills of the vLLM engine with real `vllm serve` processes started by real `rmeval score` jobs.

- A server SIGKILLed mid-job (through the run's model server, the default inside Snakemake): the job fails in one
  line and keeps its checkpoint; the rerun resumes there on a restarted server; every row is scored once, as the
  transformers engine scores it. The port asked for ($RMEVAL_VLLM_PORT) is taken: another one is used.
- A server that does not become ready within $RMEVAL_VLLM_READY_S: one line naming its log, within that time.
- Nothing is left running: the model server SIGKILLed, or an in-process job SIGKILLed while its server starts, takes
  the server and its engine cores along (its own process group; the parent-death signal, and the guardian, which
  sends SIGTERM to the group and SIGKILL after 20 s: vLLM's own shutdown can hang while its engine core starts).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.address import RUN_ENV
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.tasks import pair_rows
from vllm_helpers import group_members, requires_vllm, vllm_model
from workflow_helpers import RunOwner, torch_threads_kept

pytestmark = [pytest.mark.vllm, pytest.mark.workflow, requires_vllm]
WORDS = ("reward models rate answers about tensor networks volatility auctions protein folding beamforming "
         "stochastic gradient group fairness").split()
ROWS = 600
STARTED = re.compile(r"started vLLM server for 'tiny' \(pid (\d+), port (\d+)")


@pytest.fixture(scope="module")
def drill(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("vllm-drills")
    model = vllm_model(folder / "model")
    rng = np.random.default_rng(3)
    prompts = [" ".join(rng.choice(WORDS, 12)) + "?" for _ in range(ROWS // 5)]
    data = pd.DataFrame({"id": [f"r{i}" for i in range(ROWS)], "prompt": [prompts[i // 5] for i in range(ROWS)],
                         "response": [" ".join(rng.choice(WORDS, int(rng.integers(3, 60)))) for _ in range(ROWS)]})
    data.to_parquet(folder / "rows.parquet")
    spec = spec_from_mapping({"name": "tiny", "path": str(model), "resources": {"gpu": 0}}, where="test")
    with torch_threads_kept():
        scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
        pairs = pair_rows(data, "rows")
        reference, _ = score_rows(scorer, pairs, scorer.prepare(pairs), EngineSettings(4096, 64, 0), None, "tiny")
    vllm_spec = spec_from_mapping({"name": "tiny", "path": str(model), "resources": {"gpu": 0}, "engine": "vllm"},
                                  where="test")
    return {"folder": folder, "data": folder / "rows.parquet", "spec": vllm_spec.to_json(), "reference": reference}


def _command(drill: dict, output: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rmeval", "score", "--spec", drill["spec"], "--task", "pairs", "--input",
            str(drill["data"]), "--output", str(output), "--threads", "2", "--progress-every", "0", *extra]


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:.0f} s: {what}")


def _started(log: Path) -> tuple[int, int] | None:
    found = STARTED.findall(log.read_text(errors="replace")) if log.is_file() else []
    return (int(found[-1][0]), int(found[-1][1])) if found else None


def _last_line(text: str) -> str:
    return [line for line in text.strip().splitlines() if line.strip()][-1]


def test_a_killed_server_resumes_from_the_checkpoint_on_a_restarted_one(drill: dict, tmp_path: Path) -> None:
    owner = RunOwner(1200)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port_taken = taken.getsockname()[1]
    env = {**os.environ, RUN_ENV: owner.run_id, "HF_HUB_OFFLINE": "1", "RMEVAL_VLLM_PORT": str(port_taken),
           "RMEVAL_SERVER_IDLE_S": "600"}
    output = tmp_path / "scores.parquet"
    command = _command(drill, output, "--server", "--checkpoint-every", "30", "--token-budget", "512")
    server_log = tmp_path / ".snakemake" / "rmeval-servers"
    try:
        first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        logs = lambda: next(iter(server_log.glob("*.log")), tmp_path / "none")  # noqa: E731
        parts = output.with_name(output.name + ".partial")
        _wait(lambda: list(parts.glob("*.parquet")), 900, "a checkpoint part of the first job")
        pid, port = _started(logs())
        assert port != port_taken, "the port asked for was taken: another one is used"
        os.killpg(pid, signal.SIGKILL)  # the server and its engine cores, mid-job
        _, stderr = first.communicate(timeout=120)
        assert first.returncode == 2, stderr[-2000:]
        line = _last_line(stderr)
        assert "engine vllm" in line and "resumes from its checkpoint" in line, line
        assert list(parts.glob("*.parquet")), "the checkpoint is kept"

        second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert second.returncode == 0, second.stderr[-2000:]
        assert "had stopped; restarting it" in logs().read_text()
        restarted, _ = _started(logs())
        assert restarted != pid
        meta = json.loads(output.with_name("scores.meta.json").read_text())
        assert 0 < meta["resumed_rows"] < ROWS and meta["rows"] == ROWS
        scores = pd.read_parquet(output)
        reference = drill["reference"]
        assert scores["id"].tolist() == reference["id"].tolist()  # every row once, in input order
        np.testing.assert_allclose(scores["reward"], reference["reward"], rtol=0, atol=1e-4)
        assert scores["n_tokens"].tolist() == reference["n_tokens"].tolist()

        server_pid = int(json.loads(next(server_log.glob("*.state")).read_text())["pid"])
        os.kill(server_pid, signal.SIGKILL)  # the model server dies with no chance to stop anything itself
        _wait(lambda: not group_members(restarted), 60, f"the vLLM server (group {restarted}) to go")
    finally:
        taken.close()
        owner.end()


def test_a_server_never_ready_fails_in_one_line_naming_its_log(drill: dict, tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RMEVAL_VLLM_READY_S": "3", "RMEVAL_VLLM_LOG_DIR": str(tmp_path)}
    started = time.monotonic()
    job = subprocess.run(_command(drill, tmp_path / "s.parquet", "--no-server"), cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    elapsed = time.monotonic() - started
    assert job.returncode == 2
    line = _last_line(job.stderr)
    log = next(tmp_path.glob("tiny-*.log"))
    assert re.search(r"was not ready within 3 s \(RMEVAL_VLLM_READY_S\); stopped it; its log ", line), line
    assert str(log) in line
    assert elapsed < 60, f"{elapsed:.0f} s: start-up of rmeval, 3 s, and the stop"
    pid, _ = _started_in(job.stderr)
    assert not group_members(pid)


def _started_in(text: str) -> tuple[int, int]:
    found = STARTED.findall(text)
    return int(found[-1][0]), int(found[-1][1])


def test_a_killed_job_leaves_no_server_running(drill: dict, tmp_path: Path) -> None:
    stderr = tmp_path / "job.err"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RMEVAL_VLLM_LOG_DIR": str(tmp_path)}
    with stderr.open("w") as err:
        job = subprocess.Popen(_command(drill, tmp_path / "s.parquet", "--no-server"), cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=err)
    try:
        pid, _ = _wait(lambda: _started(stderr), 300, "the job to start its vLLM server")
        _wait(lambda: len(group_members(pid)) > 1, 600, "the server's engine core to start")
        job.kill()  # SIGKILL: the job stops nothing itself
        job.wait()
        _wait(lambda: not group_members(pid), 60, f"the vLLM server (group {pid}) to go")
        log = next(tmp_path.glob("tiny-*.log"))
        _wait(lambda: f"(group {pid}) is gone; stopped it" in log.read_text(errors="replace"), 10,
              "the guardian's line in the server's log")
    finally:
        if job.poll() is None:
            job.kill()
