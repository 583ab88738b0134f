"""The model registry: every paper model is listed with its real id, inline models work, and errors name the key."""

from __future__ import annotations

import pytest
from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec, load_registry, resolve_models, spec_from_mapping
from rmeval.resources import scoring_resources
from workflow_helpers import REPO_ROOT

PAPER_MODELS = {
    "ArmoRM-Llama3-8B-v0.1": ("RLHFlow/ArmoRM-Llama3-8B-v0.1", "armorm"),
    "GRM-llama3-8B-sftreg": ("Ray2333/GRM-llama3-8B-sftreg", "grm"),
    "Eurus-RM-7b": ("openbmb/Eurus-RM-7b", "eurus"),
    "FsfairX-LLaMA3-RM-v0.1": ("sfairXC/FsfairX-LLaMA3-RM-v0.1", "sequence-classification"),
    "RM-Mistral-7B": ("weqweasdas/RM-Mistral-7B", "sequence-classification"),
    "Mistral-RM-for-RAFT-GSHF-v0": ("hendrydong/Mistral-RM-for-RAFT-GSHF-v0", "sequence-classification"),
    "tulu-v2.5-13b-preference-mix-rm": ("allenai/tulu-v2.5-13b-preference-mix-rm", "sequence-classification"),
    "Nemotron-4-340B-Reward": ("nvidia/nemotron-4-340b-reward", "nemotron-api"),
}


@pytest.fixture(scope="module")
def registry():
    return load_registry(REPO_ROOT / "config" / "models.yaml")


def test_registry_lists_the_paper_models_with_real_ids(registry):
    for name, (path, adapter) in PAPER_MODELS.items():
        assert registry[name].path == path
        assert registry[name].adapter == adapter
    assert registry["Nemotron-4-340B-Reward"].resources.gpu == 0
    assert registry["tulu-v2.5-13b-preference-mix-rm"].resources.gpu == 2


def test_judges_are_api_models_with_a_mode(registry):
    from rmeval.resources import scoring_resources

    direct, pairwise = registry["Llama-3-70B-Instruct-judge-direct"], registry["Llama-3-70B-Instruct-judge-pairwise"]
    assert (direct.judge_mode, pairwise.judge_mode) == ("direct", "pairwise")
    assert registry["RM-Mistral-7B"].judge_mode is None
    # An endpoint needs no local GPU, whatever the entry's resources say.
    assert scoring_resources(ModelSpec(name="j", path="p", adapter="judge", options={"mode": "direct"}))["gpu"] == 0


def test_inline_model_beside_registry_names(registry, tmp_path):
    specs = resolve_models(["RM-Mistral-7B", {"name": "mine", "path": str(tmp_path), "dtype": "float32"}], registry)
    assert [spec.name for spec in specs] == ["RM-Mistral-7B", "mine"]
    assert specs[1].adapter == "sequence-classification"
    assert ModelSpec.from_json(specs[1].to_json()) == specs[1]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "x", "path": "p", "adapter": "magic"}, "unknown adapter 'magic'"),
        ({"name": "x", "path": "p", "dtype": "int3"}, ".dtype"),
        ({"name": "x"}, "missing required key 'path'"),
        ({"name": "x", "path": "p", "colour": "red"}, "unknown key(s) ['colour']"),
        ({"name": "x", "path": "p", "resources": {"gpus": 2}}, ".resources: unknown key(s) ['gpus']"),
        ({"name": "x", "path": "p", "adapter": "judge"}, ".options.mode: a judge needs mode direct or pairwise"),
        ({"name": "x", "path": "p", "adapter": "judge", "options": {"mode": "both"}}, ".options.mode"),
    ],
)
def test_bad_entries_name_the_key(entry, message):
    with pytest.raises(RmevalError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        spec_from_mapping(entry, where="my.yaml: models[0]")


def test_unknown_and_duplicate_models(registry):
    with pytest.raises(RmevalError, match="unknown model 'Nope'"):
        resolve_models(["Nope"], registry)
    with pytest.raises(RmevalError, match="duplicate model name 'RM-Mistral-7B'"):
        resolve_models(["RM-Mistral-7B", "RM-Mistral-7B"], registry)


def test_resources_scale_with_attempt(registry):
    first = scoring_resources(registry["tulu-v2.5-13b-preference-mix-rm"], attempt=1)
    second = scoring_resources(registry["tulu-v2.5-13b-preference-mix-rm"], attempt=2)
    assert first["gpu"] == second["gpu"] == 2
    assert second["mem_mb"] == 2 * first["mem_mb"] and second["runtime"] == 2 * first["runtime"]
