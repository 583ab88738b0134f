"""The scoring engine: batch invariance, OOM back-off, NaN rewards, checkpoint/resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.task import fairness_pairs
from rmeval.errors import RmevalError
from rmeval.models import load_scorer
from rmeval.models.base import BatchScores, Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.batching import plan_batches
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.scoring.job import JobRequest, run_job
from rmeval.tasks import Pairs
from workflow_helpers import rmeval_in_process, torch_threads_kept

WORDS = ("we study reward models group fairness across scientific disciplines tensor networks volatility "
         "auctions protein folding beamforming stochastic gradient").split()


def _papers(count: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"2401.{i:05d}" for i in range(count)],
        "title": [" ".join(rng.choice(WORDS, 5)).title() for _ in range(count)],
        "abstract": [" ".join(rng.choice(WORDS, int(rng.integers(4, 160)))) + "." for _ in range(count)],
        "categories": "cs.LG",
        "group": "computer_science",
    })


def _spec(path: Path, **extra):
    return spec_from_mapping({"name": "tiny", "path": str(path), "resources": {"gpu": 0}, **extra}, where="test")


def _run(scorer, pairs: Pairs, budget: int = 4096, max_rows: int = 64):
    return score_rows(scorer, pairs, scorer.prepare(pairs), EngineSettings(budget, max_rows, 0), None, "tiny")


def test_plan_batches_respects_budget_and_is_resume_stable() -> None:
    costs = np.array([5, 50, 20, 20, 7, 90, 3, 20])
    batches = plan_batches(costs, np.arange(8), budget=60, max_rows=3)
    assert np.concatenate(batches).tolist() == [5, 1, 2, 3, 7, 4, 0, 6]  # longest first, ties by index
    assert all(len(b) * costs[b].max() <= 60 or len(b) == 1 for b in batches)
    assert all(len(b) <= 3 for b in batches)
    # Re-planning the rows left after the first two batches gives the same remaining batches.
    left = np.concatenate(batches[2:])
    assert [b.tolist() for b in plan_batches(costs, left, 60, 3)] == [b.tolist() for b in batches[2:]]


def test_rewards_do_not_depend_on_batching_order_or_padding(tiny_model_dir: Path) -> None:
    pairs = fairness_pairs(_papers(40), where="test")
    spec = _spec(tiny_model_dir)
    right = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    budget_run, report = _run(right, pairs, budget=2048)
    assert report.batches < len(pairs) and report.batches > 2
    single, _ = _run(right, pairs, max_rows=1)
    order = np.random.default_rng(1).permutation(len(pairs))
    shuffled_pairs = Pairs(ids=[pairs.ids[i] for i in order], prompts=[pairs.prompts[i] for i in order],
                           responses=[pairs.responses[i] for i in order], steps=None)
    shuffled, _ = _run(right, shuffled_pairs, budget=2048)
    left_scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32", padding_side="left"))
    left, _ = _run(left_scorer, pairs, budget=2048)

    reference = single.set_index("id")["reward"]
    assert np.ptp(reference.to_numpy()) > 1e-2, "rewards must vary across rows for this test to mean anything"
    for name, table in (("token budget", budget_run), ("shuffled", shuffled), ("left padding", left)):
        got = table.set_index("id")["reward"].reindex(reference.index)
        np.testing.assert_allclose(got.to_numpy(), reference.to_numpy(), rtol=1e-4, err_msg=name)
    assert shuffled["id"].tolist() == shuffled_pairs.ids, "output keeps input order"
    assert (budget_run["n_tokens"] == single["n_tokens"]).all()


def test_cuda_oom_halves_the_budget_and_recovers(tiny_model_dir: Path) -> None:
    import torch

    pairs = fairness_pairs(_papers(24), where="test")
    scorer = load_scorer(_spec(tiny_model_dir), Runtime(device="cpu", dtype="float32"))
    reference, _ = _run(scorer, pairs, max_rows=1)
    real_score = scorer.score
    failures = []

    def flaky_score(indices: np.ndarray) -> BatchScores:
        if len(indices) > 3:  # pretend the GPU only fits 3 rows
            failures.append(len(indices))
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real_score(indices)

    scorer.score = flaky_score
    table, report = _run(scorer, pairs, budget=4096)
    assert failures and report.oom_backoffs >= 1
    assert report.token_budget == 4096 and report.token_budget_final < 4096
    np.testing.assert_allclose(table["reward"], reference["reward"], rtol=1e-4)

    def always_oom(indices: np.ndarray) -> BatchScores:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    scorer.score = always_oom
    with pytest.raises(RmevalError, match="out of memory on a single row id="):
        _run(scorer, pairs)


def test_non_oom_errors_are_not_swallowed(tiny_model_dir: Path) -> None:
    scorer = load_scorer(_spec(tiny_model_dir), Runtime(device="cpu", dtype="float32"))

    def broken(indices: np.ndarray) -> BatchScores:
        raise RuntimeError("shape mismatch")

    scorer.score = broken
    with pytest.raises(RuntimeError, match="shape mismatch"):
        _run(scorer, fairness_pairs(_papers(4), where="test"))


@pytest.mark.parametrize("bad_value", [float("nan"), float("inf")])
def test_non_finite_reward_names_the_row_and_leaves_no_output(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_value: float
) -> None:
    from rmeval.models.hf import HFScorer

    data = tmp_path / "physics.parquet"
    _papers(30).to_parquet(data)
    real_score = HFScorer.score

    def poisoned(self, indices: np.ndarray) -> BatchScores:
        scores = real_score(self, indices)
        rewards = scores.rewards.copy()
        rewards[np.asarray(self.pairs_ids)[indices] == "2401.00017"] = bad_value
        return BatchScores(rewards=rewards)

    original_prepare = HFScorer.prepare

    def remember_ids(self, pairs):
        self.pairs_ids = pairs.ids
        return original_prepare(self, pairs)

    monkeypatch.setattr(HFScorer, "score", poisoned)
    monkeypatch.setattr(HFScorer, "prepare", remember_ids)
    output = tmp_path / "scores" / "tiny" / "physics.parquet"
    request = JobRequest(spec=_spec(tiny_model_dir), task="fairness", input=data, output=output,
                         meta=output.with_name("physics.meta.json"), threads=1, token_budget=512, checkpoint_every=4)
    with pytest.raises(RmevalError, match=r"non-finite reward .* row id='2401\.00017'"):
        run_job(request)
    leftovers = sorted(p.name for p in output.parent.iterdir()) if output.parent.exists() else []
    assert leftovers == [], f"no output may be left behind, found {leftovers}"


def _cli(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rmeval", "score", *args], capture_output=True, text=True,
                          check=False, **kwargs)


def test_unknown_adapter_is_one_clear_error(tmp_path: Path) -> None:
    spec = json.dumps({"name": "m", "path": "x", "adapter": "magic"})
    result = _cli(["--spec", spec, "--task", "fairness", "--input", str(tmp_path / "in.parquet"),
                   "--output", str(tmp_path / "out.parquet")])
    assert result.returncode == 2
    assert "unknown adapter 'magic'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.parquet").exists()


SLOW_RUNNER = """
import sys, time
from rmeval.models.hf import HFScorer
real = HFScorer.score
def slow(self, indices):
    time.sleep(0.25)
    return real(self, indices)
HFScorer.score = slow
from rmeval.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.slow(reason="a real `rmeval score` process, SIGKILLed and resumed: two interpreter starts with torch")
def test_sigkill_after_first_checkpoint_then_resume_gives_identical_parquet(tiny_model_dir: Path, tmp_path: Path,
                                                                          capfd: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "math.parquet"
    _papers(48, seed=3).to_parquet(data)
    spec = _spec(tiny_model_dir).to_json()
    common = ["--spec", spec, "--task", "fairness", "--input", str(data), "--threads", "1",
              "--max-batch-rows", "4", "--checkpoint-every", "8", "--progress-every", "0"]
    # The uninterrupted reference runs in-process with the same settings (one fewer interpreter start).
    uninterrupted = tmp_path / "a" / "math.parquet"
    with torch_threads_kept():
        run_job(JobRequest(spec=_spec(tiny_model_dir), task="fairness", input=data, output=uninterrupted,
                           meta=uninterrupted.with_name("math.meta.json"), threads=1, max_batch_rows=4,
                           checkpoint_every=8, progress_every_s=0))

    resumed = tmp_path / "b" / "math.parquet"
    partial = resumed.with_name("math.parquet.partial")
    job = subprocess.Popen([sys.executable, "-c", SLOW_RUNNER, "score", *common, "--output", str(resumed)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (partial / "part-00000.parquet").exists():
        assert job.poll() is None, f"job ended before its first checkpoint: {job.stderr.read()}"
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.05)
    os.kill(job.pid, signal.SIGKILL)
    job.wait()
    job.stderr.close()
    assert job.returncode == -signal.SIGKILL
    assert not resumed.exists(), "a killed job must not leave a final parquet"

    # The rerun: the same command, in this process (the killed job was the real process).
    capfd.readouterr()
    assert rmeval_in_process(["score", *common, "--output", str(resumed)]) == 0
    assert "resuming from checkpoint" in capfd.readouterr().err
    pd.testing.assert_frame_equal(pd.read_parquet(resumed), pd.read_parquet(uninterrupted), check_exact=True)
    meta = json.loads(resumed.with_name("math.meta.json").read_text())
    assert 8 <= meta["resumed_rows"] < 48 and meta["rows"] == 48
    assert not partial.exists(), "the partial folder is removed once the final parquet exists"


def test_meta_sidecar_and_progress_lines(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "economics.parquet"
    _papers(20).to_parquet(data)
    output = tmp_path / "scores" / "tiny" / "economics.parquet"
    spec = _spec(tiny_model_dir, max_length=64).to_json()
    status = rmeval_in_process(["score", "--spec", spec, "--task", "fairness", "--input", str(data), "--output",
                                str(output), "--threads", "1", "--progress-every", "0"])
    stderr = capsys.readouterr().err
    assert status == 0, stderr
    table = pd.read_parquet(output)
    assert list(table.columns) == ["id", "reward", "n_tokens", "truncated"]
    assert table["reward"].dtype == np.float64 and table["n_tokens"].max() <= 64
    meta = json.loads(output.with_name("economics.meta.json").read_text())
    for key in ("revision", "dtype", "device", "rows", "tokens", "wall_s", "tokens_per_s", "batch_budget",
                "batch_budget_final", "n_truncated"):
        assert key in meta, key
    assert meta["revision"].startswith("local-sha256:") and meta["dtype"] == "float32" and meta["device"] == "cpu"
    assert meta["rows"] == 20 and meta["tokens"] == int(table["n_tokens"].sum())
    assert meta["n_truncated"] == int(table["truncated"].sum()) > 0
    assert meta["threads"] == 1
    # Non-TTY progress: whole lines with rows/s and tok/s (readable in Slurm logs).
    progress = [line for line in stderr.splitlines() if line.startswith("score tiny:")]
    assert progress and "rows/s" in progress[-1] and "tok/s" in progress[-1] and "20/20 rows" in progress[-1]
    assert "\r" not in stderr


@pytest.mark.slow(reason="the cold TorchInductor compile (about 15-45 s)")
def test_compiled_model_gives_the_eager_rewards(tiny_model_dir: Path, tmp_path: Path) -> None:
    """`--compile` (scoring.compile) wraps the model in torch.compile; rewards must not move."""
    data = tmp_path / "economics.parquet"
    _papers(12, seed=3).to_parquet(data)
    rewards = {}
    for compiled in (False, True):
        output = tmp_path / f"compiled-{compiled}" / "economics.parquet"
        meta = output.with_name("economics.meta.json")
        run_job(JobRequest(spec=_spec(tiny_model_dir, dtype="float32"), task="fairness", input=data, output=output,
                           meta=meta, threads=1, token_budget=1024, checkpoint_every=0, compile=compiled))
        rewards[compiled] = pd.read_parquet(output).sort_values("id")["reward"].to_numpy()
        assert json.loads(meta.read_text())["compiled"] is compiled
    np.testing.assert_allclose(rewards[True], rewards[False], rtol=1e-4, atol=1e-6)


def test_copies_are_scored_once_and_share_every_output(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Rows with one model input: one forward pass for all, one reward bit for bit at any budget, and a resume
    from a checkpoint of some first rows still gives every copy its first row's reward."""
    from rmeval.scoring.checkpoint import Checkpoint
    from rmeval.scoring.distinct import distinct_rows

    papers = _papers(12)
    papers = pd.concat([papers, papers.iloc[[3, 3, 7]].assign(id=["c1", "c2", "c3"])], ignore_index=True)
    pairs = fairness_pairs(papers, where="test")
    scorer = load_scorer(_spec(tiny_model_dir), Runtime(device="cpu", dtype="float32"))
    scored: list[int] = []
    score = scorer.score
    scorer.score = lambda indices: (scored.extend(indices.tolist()), score(indices))[1]
    prepared = scorer.prepare(pairs)
    assert distinct_rows(prepared.keys, len(pairs)).count == 12
    rewards = []
    for budget in (64, 65536):
        scored.clear()
        table, report = score_rows(scorer, pairs, prepared, EngineSettings(budget, 64, 0), None, "tiny")
        assert sorted(scored) == list(range(12)) and report.distinct_rows == 12 and report.scored_rows == 12
        by_id = table.set_index("id")
        assert by_id.loc["c1", "reward"] == by_id.loc["c2", "reward"] == by_id.loc[pairs.ids[3], "reward"]
        assert by_id.loc["c3", "n_tokens"] == by_id.loc[pairs.ids[7], "n_tokens"]
        rewards.append(by_id["reward"])
    checkpoint = Checkpoint(tmp_path / "out.parquet", "fingerprint")
    checkpoint.start()
    checkpoint.append(table.iloc[[3, 5]].assign(index=[3, 5])[["index", *table.columns]])
    resumed, report = score_rows(scorer, pairs, prepared, EngineSettings(4096, 64, 100), checkpoint, "tiny")
    assert report.resumed_rows == 2 and report.scored_rows == 10
    assert resumed.set_index("id").loc["c1", "reward"] == table.set_index("id").loc[pairs.ids[3], "reward"]
