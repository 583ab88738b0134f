"""Smoke test of perf/bench_scoring.py --quick (its main(), in the test process): it runs end to end and its
rewards agree.

Checks the JSON line's structure and that the batched runs reproduce one-at-a-time rewards;
never timings (performance is reported by the benchmark, not asserted by tests).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest
from workflow_helpers import torch_threads_kept

REPO_ROOT = Path(__file__).resolve().parents[1]
RUN_FIELDS = {"name", "policy", "dtype", "rows", "real_tokens", "computed_tokens", "batches", "wall_s", "cpu_s",
              "tokens_per_s", "padding_efficiency", "max_rel_diff_vs_a"}


def _bench_scoring_module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scoring", REPO_ROOT / "perf" / "bench_scoring.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_scoring", module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow(reason="perf/bench_scoring.py --quick: builds and scores its ~30M-parameter model in five policies")
def test_bench_scoring_quick(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    # The script's main() in this process (torch is loaded here already); its last stdout line is the summary.
    monkeypatch.setenv("RMEVAL_SHARED_DATA", str(shared_data))
    bench = _bench_scoring_module(monkeypatch)
    with torch_threads_kept():
        status = bench.main(["--quick", "--threads", "1", "--cache-dir", str(tmp_path / "models")])
    captured = capsys.readouterr()
    assert status == 0, captured.err[-3000:]
    summary = json.loads(captured.out.strip().splitlines()[-1])

    assert summary["benchmark"] == "bench_scoring" and summary["quick"] is True
    assert summary["rewardbench_cli"].startswith("not run: needs CUDA")
    assert 25e6 <= summary["model"]["params"] <= 35e6 and summary["model"]["vocab_size"] == 32000
    runs = summary["runs"]
    assert [(run["name"], run["dtype"]) for run in runs] == [
        ("a", "float32"), ("b", "float32"), ("c", "float32"), ("b", "bfloat16"), ("c", "bfloat16")]
    assert summary["rows"] == 16
    for run in runs:
        assert RUN_FIELDS <= set(run)
        assert run["rows"] == (16 if run["dtype"] == "float32" else 2)  # --quick: bf16 on the first 2 rows
    # every policy scores the same token sequences
    assert runs[0]["real_tokens"] == runs[1]["real_tokens"] == runs[2]["real_tokens"]
    assert runs[3]["real_tokens"] == runs[4]["real_tokens"] < runs[0]["real_tokens"]
    for run in runs:
        assert 0 < run["padding_efficiency"] <= 1 and run["computed_tokens"] >= run["real_tokens"]
        assert math.isfinite(run["tokens_per_s"]) and run["tokens_per_s"] > 0
    assert runs[0]["padding_efficiency"] == 1.0 and runs[0]["max_rel_diff_vs_a"] is None
    assert runs[1]["batches"] == 2  # RewardBench's fixed batch of 8
    # fp32 batching must not change rewards (RewardBench issue #137 is exactly this kind of bug).
    for run in runs[1:3]:
        assert run["max_rel_diff_vs_a"] <= 1e-4, run
    assert summary["rewards_within_tolerance"] is True
    # bf16 drifts, but stays a reward of the same model (not garbage, not an identical copy of fp32).
    for run in runs[3:]:
        assert 0 < run["max_rel_diff_vs_a"] < 0.5, run
    assert set(summary["goals"]) == {"c_over_b", "c_over_a", "fp32_rewards_within_1e-4"}
    assert {"c_over_b", "c_over_a", "b_over_a"} <= set(summary["ratios"])


def test_bench_scoring_dedup_ab_on_the_tiny_model(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The deduplication A/B (`--dedup-ab`): both arms run, interleaved, on rows without duplicates, with identical
    rewards (its function on the tiny model: the 30M bench model's loading is what --quick above already pays)."""
    from rmeval.tasks import Pairs

    bench = _bench_scoring_module(monkeypatch)
    engine = bench.load_engine(tiny_model_dir, "float32", 512, None)
    pairs = Pairs(ids=[f"r{i}" for i in range(6)], prompts=["Rate this."] * 6,
                  responses=[f"answer number {i} " * (i + 1) for i in range(6)], steps=None)
    with torch_threads_kept():
        summary = bench.dedup_ab(engine, pairs, 2)
    assert summary["rows"] == summary["distinct_rows"] == 6
    assert len(summary["cpu_s"]["dedup"]) == len(summary["cpu_s"]["before"]) == 2
    assert summary["rewards_identical"] is True and summary["keys_cpu_s"] >= 0


def test_official_rewardbench_skips_with_its_reason_without_the_package(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("official_rewardbench", REPO_ROOT / "perf" / "official_rewardbench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.delenv("RMEVAL_REWARDBENCH_PYTHON", raising=False)
    assert module.main([]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["skipped"].startswith("no official environment")
    assert module.main(["--official-python", sys.executable]) == 0  # this environment has no rewardbench package
    assert "cannot import rewardbench" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])["skipped"]
