"""ArmoRM, GRM and Eurus: native heads against fixtures built like the published checkpoints.

The fixtures (tests/published_heads.py) carry the published key names, config fields, tokenizer
layouts and modeling files with the published behaviour, including what breaks on transformers 5.
Each test computes the reward the way the model card does, one conversation at a time, through the
fixture's own modeling code, and asserts that `rmeval score`'s batched, padded rewards equal it
(<= 1e-5 abs, fp32) for both padding sides, with identical token ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from published_heads import build_published_fixture, import_fixture_module, reference_model
from rmeval.errors import RmevalError
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.tasks import Pairs
from workflow_helpers import rmeval_in_process

ATOL = 1e-5


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("published-heads")
    return {kind: build_published_fixture(root / kind, kind) for kind in ("armorm", "grm", "eurus")}


def _pairs(count: int = 10) -> Pairs:
    rng = np.random.default_rng(3)
    words = "we study reward models for scientific abstracts across eight groups with tensor networks".split()
    prompts = [f"Write an abstract for a paper with title {' '.join(rng.choice(words, 4))}" for _ in range(count)]
    responses = [" ".join(rng.choice(words, int(rng.integers(2, 50)))) for _ in range(count)]
    return Pairs(ids=[f"r{i}" for i in range(count)], prompts=prompts, responses=responses, steps=None)


def _spec(kind: str, path: Path, **extra):
    return spec_from_mapping({"name": f"tiny-{kind}", "path": str(path), "adapter": kind, "resources": {"gpu": 0},
                              **extra}, where="test")


def _engine(kind: str, path: Path, pairs: Pairs, padding_side: str):
    scorer = load_scorer(_spec(kind, path), Runtime(device="cpu", dtype="float32", padding_side=padding_side))
    table, report = score_rows(scorer, pairs, scorer.prepare(pairs), EngineSettings(300, 64, 0), None, f"tiny-{kind}")
    assert report.batches > 1 and report.batches < len(pairs), "the test must exercise multi-row padded batches"
    rows = [scorer.encoded.row(i).tolist() for i in range(len(pairs))]
    return scorer, table["reward"].to_numpy(), rows


def _messages(prompt: str, response: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]


def _card_rewards(kind: str, path: Path, pairs: Pairs) -> tuple[list[float], list[list[int]]]:
    """The model card's computation, one conversation at a time, through the fixture's modeling code."""
    import torch
    from transformers import AutoTokenizer

    model = reference_model(path, kind)
    tokenizer = AutoTokenizer.from_pretrained(path)
    rewards, ids = [], []
    with torch.inference_mode():
        for prompt, response in zip(pairs.prompts, pairs.responses, strict=True):
            if kind == "armorm":  # ArmoRM card: apply_chat_template(messages, return_tensors="pt"), output.score
                input_ids = tokenizer.apply_chat_template(_messages(prompt, response), return_tensors="pt",
                                                          return_dict=True)["input_ids"]
                reward = float(model(input_ids).score[0])
                ids.append(input_ids[0].tolist())
            elif kind == "grm":  # GRM card: template text -> encode_plus(padding='max_length') -> (_, _, value)
                text = tokenizer.apply_chat_template(_messages(prompt, response), tokenize=False)
                # `encode_plus` (gone in transformers 5) is the tokenizer's call on one text
                tokens = tokenizer(text, padding="max_length", truncation=True, return_tensors="pt")
                _, _, value = model(tokens["input_ids"][0].view(1, -1), attention_mask=tokens["attention_mask"][0].view(1, -1))
                reward = float(value[0])
                ids.append(tokens["input_ids"][0][tokens["attention_mask"][0].bool()].tolist())
            else:  # Eurus card: tokenizer("[INST] p [/INST] r") -> model(**inputs).item()
                inputs = tokenizer(f"[INST] {prompt} [/INST] {response}", return_tensors="pt")
                reward = model(**inputs).item()
                ids.append(inputs["input_ids"][0].tolist())
            rewards.append(reward)
    return rewards, ids


@pytest.fixture
def patched_docstring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give transformers 5 back the name ArmoRM's file imports, for the reference computation only."""
    import transformers.models.llama.modeling_llama as modeling_llama

    monkeypatch.setattr(modeling_llama, "LLAMA_INPUTS_DOCSTRING", "", raising=False)


# --- (a) why native: the published code does not load / read right on transformers 5 ------------------
def test_armorm_remote_code_fails_on_transformers_5(fixtures: dict[str, Path]) -> None:
    from transformers import AutoModelForSequenceClassification

    with pytest.raises(ImportError, match="LLAMA_INPUTS_DOCSTRING"):
        AutoModelForSequenceClassification.from_pretrained(fixtures["armorm"], trust_remote_code=True)


def test_eurus_remote_code_fails_on_transformers_5(fixtures: dict[str, Path]) -> None:
    from transformers import AutoModel

    with pytest.raises(AttributeError, match="all_tied_weights_keys"):
        AutoModel.from_pretrained(fixtures["eurus"], trust_remote_code=True)


def test_grm_remote_code_misreads_left_padded_rows(fixtures: dict[str, Path]) -> None:
    """GRM's own head reads `attention_mask.sum(-1) - 1`: fine one row at a time, wrong when left-padded."""
    import torch
    from transformers import AutoModelForSequenceClassification

    path = fixtures["grm"]
    model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True, dtype=torch.float32).eval()
    pairs = _pairs(4)
    scorer = load_scorer(_spec("grm", path), Runtime(device="cpu", dtype="float32", padding_side="left"))
    scorer.prepare(pairs)
    ids, mask = scorer.batch_arrays(np.arange(4))
    inputs = scorer.model_inputs(ids, mask)
    with torch.inference_mode():
        _, _, remote = model(**inputs)
        rows = [torch.from_numpy(scorer.encoded.row(i)).view(1, -1) for i in range(4)]
        alone = [float(model(row, attention_mask=torch.ones_like(row))[2][0]) for row in rows]
    native = scorer.score(np.arange(4)).rewards
    np.testing.assert_allclose(native, alone, atol=ATOL, rtol=0)
    assert np.max(np.abs(remote.numpy() - np.array(alone))) > 1e-2, "the published head should misread left padding"


# --- (b) + (c) the model card's one-row computation == rmeval's batched, padded rewards -------------
@pytest.mark.parametrize("kind", ["armorm", "grm", "eurus"])
def test_batched_padded_rewards_equal_the_model_card(kind: str, fixtures: dict[str, Path], patched_docstring) -> None:
    path = fixtures[kind]
    pairs = _pairs()
    card, card_ids = _card_rewards(kind, path, pairs)
    for side in ("right", "left"):
        scorer, engine, engine_ids = _engine(kind, path, pairs, side)
        assert engine_ids == card_ids, f"{kind}/{side}: token ids differ from the model card's"
        diff = float(np.max(np.abs(engine - np.array(card))))
        assert diff <= ATOL, f"{kind}/{side}: max abs diff {diff:.3g} against the model card"
        # (c) a row alone == the same row inside a padded batch
        alone = np.array([scorer.score(np.array([i])).rewards[0] for i in range(len(pairs))])
        np.testing.assert_allclose(scorer.score(np.arange(len(pairs))).rewards, alone, atol=ATOL, rtol=0)
        assert scorer.describe()["implementation"].startswith("native (rmeval.models.heads.")
    assert np.std(card) > 1e-3, "random heads should give distinct rewards"


def test_grm_ids_start_with_two_bos_like_its_training_code(fixtures: dict[str, Path]) -> None:
    scorer = load_scorer(_spec("grm", fixtures["grm"]), Runtime(device="cpu", dtype="float32"))
    scorer.prepare(_pairs(2))
    bos = scorer.tokenizer.bos_token_id
    assert scorer.encoded.row(0)[:3].tolist()[:2] == [bos, bos] and scorer.encoded.row(0)[2] != bos
    # `add_bos` in the registry switches back to rmeval's one-BOS policy
    single = load_scorer(_spec("grm", fixtures["grm"], add_bos=True), Runtime(device="cpu", dtype="float32"))
    single.prepare(_pairs(2))
    assert single.encoded.row(0)[:2].tolist() == [bos, scorer.encoded.row(0)[2]]


def test_armorm_reads_rewards_before_a_pad_id_inside_the_text(fixtures: dict[str, Path], patched_docstring) -> None:
    """ArmoRM's 'first pad - 1' rule, kept for rows holding the pad id, the same alone and padded."""
    import torch

    path = fixtures["armorm"]
    scorer = load_scorer(_spec("armorm", path), Runtime(device="cpu", dtype="float32", padding_side="left"))
    pad = scorer.model.config.pad_token_id
    row = scorer.tokenizer.apply_chat_template(_messages("a b c", "d e f g h"), return_dict=True)["input_ids"]
    row = row[:4] + [pad] + row[4:]
    reference = reference_model(path, "armorm")
    with torch.inference_mode():
        expected = float(reference(torch.tensor([row])).score[0])
        ids = torch.tensor([[pad] * 3 + row, row + [pad] * 3])
        mask = torch.tensor([[0] * 3 + [1] * len(row), [1] * len(row) + [0] * 3])
        got = scorer.model(ids, attention_mask=mask)
    np.testing.assert_allclose(got.numpy(), [expected, expected], atol=ATOL, rtol=0)


# --- loading errors and settings ------------------------------------------------------------------
def test_unknown_weight_names_the_model_file_and_key(tmp_path: Path) -> None:
    import torch

    path = build_published_fixture(tmp_path / "eurus", "eurus", extra_tensors={"value_head.weight": torch.zeros(1, 64)})
    with pytest.raises(RmevalError, match=r"'tiny-eurus'.*model\.safetensors: unknown weight 'value_head\.weight'"):
        load_scorer(_spec("eurus", path), Runtime(device="cpu", dtype="float32"))


def test_missing_head_weight_is_a_clear_error(tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    path = build_published_fixture(tmp_path / "grm", "grm")
    state = load_file(str(path / "model.safetensors"))
    del state["v_head.summary.2.bias"]
    save_file(state, str(path / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(RmevalError, match=r"'tiny-grm'.*head weight 'v_head\.summary\.2\.bias' is missing"):
        load_scorer(_spec("grm", path), Runtime(device="cpu", dtype="float32"))


def test_wrong_backbone_type_is_refused(fixtures: dict[str, Path]) -> None:
    with pytest.raises(RmevalError, match="model_type 'mistral'"):
        load_scorer(_spec("armorm", fixtures["eurus"]), Runtime(device="cpu", dtype="float32"))


@pytest.mark.parametrize("kind", ["armorm", "grm", "eurus"])
def test_trust_remote_code_is_refused_for_native_heads(kind: str, fixtures: dict[str, Path]) -> None:
    with pytest.raises(RmevalError, match="never runs the model repository's code"):
        _spec(kind, fixtures[kind], trust_remote_code=True)


def test_fixture_modeling_files_keep_the_published_structure(fixtures: dict[str, Path]) -> None:
    """The fixtures carry what breaks upstream, and the published key names."""
    from safetensors import safe_open

    assert "from transformers.models.llama.modeling_llama import LLAMA_INPUTS_DOCSTRING" in (
        fixtures["armorm"] / "modeling_custom.py").read_text()
    assert "post_init" not in (fixtures["eurus"] / "modeling_eurus_rm.py").read_text().split("# like the published")[0]
    assert "attention_mask.sum(dim=-1) - 1" in (fixtures["grm"] / "modeling_grm.py").read_text()
    index = json.loads((fixtures["armorm"] / "model.safetensors.index.json").read_text())["weight_map"]
    assert {"regression_layer.weight", "gating.logit_scale", "reward_transform_matrix", "gating.layers.3.bias"} <= set(index)
    with safe_open(str(fixtures["grm"] / "model.safetensors"), framework="pt") as handle:
        assert {"v_head.summary.0.weight", "v_head.summary.2.bias", "lm_head.weight"} <= set(handle.keys())
    with safe_open(str(fixtures["eurus"] / "model.safetensors"), framework="pt") as handle:
        assert "regression_head.weight" in set(handle.keys())
    assert import_fixture_module(fixtures["grm"], "grm").LlamaWithValueHead.__name__ == "LlamaWithValueHead"


@pytest.mark.parametrize("kind", ["armorm", "grm", "eurus"])
def test_rmeval_score_cli_equals_the_model_card(kind: str, fixtures: dict[str, Path], tmp_path: Path,
                                                patched_docstring) -> None:
    """The `rmeval score` command itself (spec JSON, runtime choice, parquet + meta) on the fairness task."""
    import pandas as pd
    from rmeval.benchmarks.fairness.task import fairness_pairs

    rng = np.random.default_rng(5)
    words = "protein folding auctions volatility beamforming stochastic gradient tensor networks".split()
    papers = pd.DataFrame({"id": [f"2401.{i:05d}" for i in range(12)],
                           "title": [" ".join(rng.choice(words, 4)).title() for _ in range(12)],
                           "abstract": [" ".join(rng.choice(words, int(rng.integers(3, 60)))) + "." for _ in range(12)],
                           "categories": "cs.LG", "group": "computer_science"})
    data = tmp_path / "papers.parquet"
    papers.to_parquet(data)
    output = tmp_path / "scores.parquet"
    status = rmeval_in_process(["score", "--spec", _spec(kind, fixtures[kind]).to_json(), "--task", "fairness",
                                "--input", str(data), "--output", str(output), "--threads", "1", "--progress-every",
                                "0", "--token-budget", "400"])
    assert status == 0
    card, _ = _card_rewards(kind, fixtures[kind], fairness_pairs(papers, where="test"))
    table = pd.read_parquet(output)
    assert float(np.max(np.abs(table["reward"].to_numpy() - np.array(card)))) <= ATOL
    meta = json.loads(output.with_name("scores.meta.json").read_text())
    assert meta["adapter_details"]["implementation"].startswith("native (") and meta["dtype"] == "float32"


@pytest.mark.slow(reason="a fresh interpreter: HF_HUB_OFFLINE is read when huggingface_hub is imported")
def test_hub_id_at_a_pinned_commit_loads_offline_from_the_cache(fixtures: dict[str, Path], tmp_path: Path) -> None:
    """`path: RLHFlow/ArmoRM-Llama3-8B-v0.1` from a pre-filled hub cache (sharded safetensors + index), offline."""
    import os
    import shutil
    import subprocess
    import sys

    import pandas as pd

    commit = "89abcdef0123456789abcdef0123456789abcdef"
    repo_dir = tmp_path / "hub" / "models--RLHFlow--ArmoRM-Llama3-8B-v0.1"
    shutil.copytree(fixtures["armorm"], repo_dir / "snapshots" / commit)
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    papers = pd.DataFrame({"id": ["a", "b", "c"], "title": ["Tensor Networks", "Auctions", "Protein Folding"],
                           "abstract": ["We study x.", "We study y and z.", "We fold proteins."]})
    data = tmp_path / "papers.parquet"
    papers.to_parquet(data)
    outputs = {label: tmp_path / label / "scores.parquet" for label in ("hub", "local")}

    def score_args(path: str, output: Path) -> list[str]:
        spec = json.dumps({"name": "armorm-hub", "path": path, "adapter": "armorm", "resources": {"gpu": 0}})
        return ["score", "--spec", spec, "--task", "fairness", "--input", str(data), "--output", str(output),
                "--threads", "1"]

    # The hub id in its own process: the hub's cache and offline switches are read when huggingface_hub loads.
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "rmeval", *score_args("RLHFlow/ArmoRM-Llama3-8B-v0.1",
                                                                          outputs["hub"])],
                            capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stderr
    assert "trust_remote_code" not in result.stderr
    # The same folder by its local path, in this process.
    assert rmeval_in_process(score_args(str(fixtures["armorm"]), outputs["local"])) == 0
    meta = json.loads(outputs["hub"].with_name("scores.meta.json").read_text())
    assert meta["revision"] == commit
    np.testing.assert_array_equal(pd.read_parquet(outputs["hub"])["reward"], pd.read_parquet(outputs["local"])["reward"])

