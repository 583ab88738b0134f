"""Loading by Hugging Face id from a (pre-filled, offline) hub cache, and the recorded revision."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rmeval.errors import RmevalError
from rmeval.models.hf import model_revision
from rmeval.registry import spec_from_mapping

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _fake_hub_cache(root: Path, model_dir: Path, repo: str = "rmeval-test/tiny-rm") -> Path:
    """The layout `huggingface_hub` writes: models--org--name/{refs/main, snapshots/<commit>/...}."""
    repo_dir = root / ("models--" + repo.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / COMMIT
    shutil.copytree(model_dir, snapshot)
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(COMMIT)
    return root


@pytest.mark.slow(reason="a fresh interpreter: HF_HUB_OFFLINE is read when huggingface_hub is imported")
def test_hub_id_loads_offline_from_cache_and_records_the_commit(tiny_model_dir: Path, tmp_path: Path) -> None:
    cache = _fake_hub_cache(tmp_path / "hub", tiny_model_dir)
    data = tmp_path / "physics.parquet"
    pd.DataFrame({"id": ["a", "b"], "title": ["T1", "T2"], "abstract": ["We study x.", "We study y."]}).to_parquet(data)
    output = tmp_path / "scores" / "physics.parquet"
    spec = json.dumps({"name": "tiny-hub", "path": "rmeval-test/tiny-rm", "resources": {"gpu": 0}})
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "rmeval", "score", "--spec", spec, "--task", "fairness", "--input", str(data),
         "--output", str(output), "--threads", "1"], capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stderr
    meta = json.loads(output.with_name("physics.meta.json").read_text())
    assert meta["revision"] == COMMIT and meta["revision_requested"] is None
    assert len(pd.read_parquet(output)) == 2


def test_local_folder_revision_is_a_content_fingerprint(tiny_model_dir: Path, tmp_path: Path) -> None:
    spec = spec_from_mapping({"name": "m", "path": str(tiny_model_dir)}, where="test")
    load_with, recorded = model_revision(spec)
    assert load_with is None and recorded.startswith("local-sha256:")
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    assert model_revision(spec_from_mapping({"name": "m", "path": str(copy)}, where="test"))[1] == recorded
    config = json.loads((copy / "config.json").read_text())
    config["hidden_act"] = "gelu"
    (copy / "config.json").write_text(json.dumps(config))
    assert model_revision(spec_from_mapping({"name": "m", "path": str(copy)}, where="test"))[1] != recorded


def test_missing_local_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    spec = spec_from_mapping({"name": "gone", "path": str(tmp_path / "no-such-model")}, where="test")
    with pytest.raises(RmevalError, match="model 'gone': path .* is not a model directory"):
        model_revision(spec)
