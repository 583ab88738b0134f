"""A scoring job's time limit (rmeval.resources.scoring_runtime): its input's tokens at the model's measured
throughput, with a safety factor and a floor, else the registry entry's `runtime`; a model's Slurm allocation asks
for the sum of its jobs' limits (tests/test_slurm_group.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from rmeval.registry import spec_from_mapping
from rmeval.resources import (
    CHARS_PER_TOKEN,
    RUNTIME_FLOOR_MIN,
    RUNTIME_SAFETY,
    input_tokens,
    measured_tokens_per_s,
    scoring_runtime,
)

GPU_MODEL = spec_from_mapping({"name": "m", "path": "org/m", "resources": {"gpu": 1, "runtime": 240}}, where="test")
CPU_MODEL = spec_from_mapping({"name": "c", "path": "org/c", "resources": {"gpu": 0, "runtime": 30}}, where="test")


def _sidecar(path: Path, tokens_per_s: float | None, device: str) -> Path:
    path.write_text(json.dumps({"tokens_per_s": tokens_per_s, "device": device}))
    return path


def test_input_tokens_count_every_rows_text(tmp_path: Path) -> None:
    table = pd.DataFrame({"id": [f"p{i}" for i in range(200)], "abstract": ["word " * 200] * 200,
                          "steps": [["step one", "step two"]] * 200, "n": range(200)})
    table.to_parquet(tmp_path / "group.parquet")  # repeated texts: dictionary-encoded, but each row is scored
    text_chars = sum(len(f"p{i}") for i in range(200)) + 200 * len("word " * 200) + 200 * len("step onestep two")
    assert input_tokens(tmp_path / "group.parquet") == text_chars // CHARS_PER_TOKEN
    assert input_tokens(tmp_path / "not-yet.parquet") is None  # the data stage has not run: the entry's runtime
    (tmp_path / "table.csv").write_text("id,abstract\n1,x\n")
    assert input_tokens(tmp_path / "table.csv") is None


def test_throughput_is_the_median_measured_on_the_jobs_device(tmp_path: Path) -> None:
    sidecars = [_sidecar(tmp_path / "a.meta.json", 1000.0, "cuda:0"), _sidecar(tmp_path / "b.meta.json", 3000.0, "cuda"),
                _sidecar(tmp_path / "c.meta.json", 2000.0, "cuda:1"), _sidecar(tmp_path / "d.meta.json", 50.0, "cpu"),
                _sidecar(tmp_path / "e.meta.json", None, "cuda:0"), tmp_path / "missing.meta.json"]
    assert measured_tokens_per_s(GPU_MODEL, sidecars) == 2000.0  # a CPU test run does not time a GPU job
    assert measured_tokens_per_s(CPU_MODEL, sidecars) == 50.0
    assert measured_tokens_per_s(GPU_MODEL, [tmp_path / "missing.meta.json"]) is None


def test_runtime_is_the_estimate_with_safety_and_floor_else_the_entrys() -> None:
    assert scoring_runtime(GPU_MODEL, None, 2000.0) == 240  # nothing to estimate from: the registry's value
    assert scoring_runtime(GPU_MODEL, 5_000_000, None) == 240
    five_million = 5_000_000 / 2000.0 / 60 * RUNTIME_SAFETY  # 16k abstracts at 2000 tokens/s: about 83 minutes
    assert scoring_runtime(GPU_MODEL, 5_000_000, 2000.0) == int(-(-five_million // 1))
    assert scoring_runtime(GPU_MODEL, 10_000, 2000.0) == RUNTIME_FLOOR_MIN  # a small table still gets the floor
    assert scoring_runtime(GPU_MODEL, 10_000, 2000.0, attempt=3) == 3 * RUNTIME_FLOOR_MIN  # retries ask for more
    assert scoring_runtime(GPU_MODEL, None, None, attempt=2) == 480
