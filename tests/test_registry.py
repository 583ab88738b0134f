"""The model registry and the adapter catalogue: every paper model is listed with its real id, inline models work,
entries are checked against workflow/schemas/models.schema.yaml and the catalogue, and each error is one line naming
the file and key."""

from __future__ import annotations

import copy
import subprocess
import sys
from dataclasses import fields

import pytest
import yaml
from rmeval.config_check import ConfigError, check_config, config_problems, config_schema, load_schema
from rmeval.errors import RmevalError
from rmeval.models.catalogue import ADAPTERS, Adapter
from rmeval.registry import (
    MODELS_SCHEMA,
    ModelResources,
    ModelSpec,
    load_registry,
    resolve_models,
    spec_from_mapping,
)
from rmeval.resources import scoring_resources
from snakemake.utils import validate
from workflow_helpers import REPO_ROOT, merged_schema_file

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
        ({"name": "x", "path": "p", "adapter": "magic"},
         ".adapter: unknown adapter 'magic'; known adapters: ['sequence-classification', 'armorm', "),
        ({"name": "x", "path": "p", "adapter": "prn"}, ".adapter: unknown adapter 'prn'; did you mean 'prm'?"),
        ({"name": "x", "path": "p", "dtype": "int3"},
         ".dtype: got 'int3'; allowed: auto, float32, bfloat16, float16"),
        ({"name": "x"}, ".path: missing; required"),
        ({"name": "x", "path": "p", "colour": "red"}, ".colour: unknown key; allowed: name, path, adapter, "),
        ({"name": "x", "path": "p", "resources": {"gpus": 2}}, ".resources.gpus: unknown key; did you mean `gpu`?"),
        ({"name": "x", "path": "p", "gpu": 2}, ".gpu: unknown key here; did you mean `resources.gpu`?"),
        ({"name": "x", "path": "p", "max_length": "long"}, ".max_length: got 'long' (a string); expected an integer >= 1"),
        ({"name": "x", "path": "p", "adapter": "judge", "options": {"base_url": "http://h/v1"}},
         ".options.mode: missing; adapter 'judge' needs it (direct or pairwise)"),
        ({"name": "x", "path": "p", "adapter": "judge", "options": {"mode": "both", "base_url": "http://h/v1"}},
         ".options.mode: got 'both'; allowed: direct, pairwise"),
        ({"name": "x", "path": "p", "adapter": "nemotron-api"}, ".options.base_url: missing; adapter 'nemotron-api' needs it"),
        ({"name": "x", "path": "p", "adapter": "prm", "options": {"step_tg": "ки"}},
         ".options.step_tg: unknown option for adapter 'prm'; did you mean `step_tag`? allowed: step_tag, good_token, "),
        ({"name": "x", "path": "p", "adapter": "prm", "options": {"good_token_id": "12"}},
         ".options.good_token_id: got '12'; expected an integer"),
        ({"name": "x", "path": "p", "adapter": "armorm", "options": {"step_tag": "ки"}},
         ".options.step_tag: unknown option for adapter 'armorm'; allowed: none (this adapter reads no options)"),
        ({"name": "x", "path": "p", "adapter": "grm", "trust_remote_code": True},
         ".trust_remote_code: adapter 'grm' loads the checkpoint into rmeval's own head"),
    ],
)
def test_bad_entries_give_one_line_naming_the_key(entry, message):
    with pytest.raises(RmevalError) as raised:
        spec_from_mapping(entry, where="my.yaml: models[0]")
    assert str(raised.value).startswith("my.yaml: models[0]" + message), str(raised.value)
    assert len(str(raised.value).splitlines()) == 1, str(raised.value)


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


# ----------------------------------------------------------------------------- the adapter catalogue
def test_every_catalogue_adapter_names_a_scorer_class_that_imports():
    from rmeval.models import scorer_class
    from rmeval.models.base import RewardScorer

    for name, entry in ADAPTERS.items():
        cls = scorer_class(entry)
        assert issubclass(cls, RewardScorer) and cls.__name__ == entry.scorer.split(":")[1], name
        assert not (entry.remote and entry.native_head), name
        assert entry.remote == (entry.api_key_env is not None) == ("base_url" in entry.option_names), name


def test_catalogue_registry_and_resources_import_no_torch_nor_transformers():
    # Snakemake reads them at parse time, before any GPU is claimed.
    code = ("import sys; import rmeval.models.catalogue, rmeval.registry, rmeval.resources; "
            "print(sorted(m for m in ('torch', 'transformers', 'numpy', 'requests') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


def test_settings_are_the_entry_options_over_the_catalogue_defaults():
    prm = ADAPTERS["prm"]
    assert prm.settings({"step_tag": "<step>"}) == {
        "step_tag": "<step>", "good_token": "+", "bad_token": "-", "step_separator": "\n"}
    assert ADAPTERS["judge"].api_key_env == "OPENAI_API_KEY" and not ADAPTERS["judge"].api_key_required
    assert ADAPTERS["nemotron-api"].api_key_env == "NVIDIA_API_KEY" and ADAPTERS["nemotron-api"].api_key_required
    assert ADAPTERS["judge"].settings({"mode": "direct"})["chars_per_token"] == 3.0
    assert ADAPTERS["nemotron-api"].settings({})["chars_per_token"] == 2.5


def test_a_new_remote_adapter_needs_no_gpu_no_download_and_no_server(monkeypatch, tmp_path):
    # The catalogue's flag, not the adapter's name, decides: a made-up remote adapter is treated like the judge.
    from rmeval.preflight import Plan, collect
    from rmeval.scoring.cli import wants_server
    from rmeval.scoring.download import download

    monkeypatch.setitem(ADAPTERS, "my-endpoint", Adapter("my-endpoint", "my.module:MyScorer", "test", remote=True))
    remote = ModelSpec(name="r", path=str(tmp_path / "no-such-folder"), adapter="my-endpoint",
                       resources=ModelResources(gpu=2))
    local = ModelSpec(name="l", path=str(tmp_path / "no-such-folder"), resources=ModelResources(gpu=2))
    assert scoring_resources(remote)["gpu"] == 0 and scoring_resources(local)["gpu"] == 2
    assert download(remote)["source"] == "api"
    with pytest.raises(RmevalError, match="not a model folder"):
        download(local)
    assert not wants_server(remote, True, {}) and wants_server(local, True, {})
    plan = Plan(models={"r": remote, "l": local})
    assert [problem.key for problem in collect(plan, env={})] == ["models (l).path"]
    # Preflight asks for a key only where the catalogue says the endpoint needs one: a judge on a local
    # vLLM server runs without OPENAI_API_KEY, Nemotron's endpoint refuses requests without NVIDIA_API_KEY.
    endpoint = {"base_url": "http://127.0.0.1:8000/v1"}
    judge = spec_from_mapping({"name": "j", "path": "m", "adapter": "judge", "options": {"mode": "direct", **endpoint}},
                              where="t")
    nemotron = spec_from_mapping({"name": "n", "path": "m", "adapter": "nemotron-api", "options": endpoint}, where="t")
    plan = Plan(models={"j": judge, "n": nemotron})
    assert [problem.what.split(" (")[0] for problem in collect(plan, env={})] == ["NVIDIA_API_KEY"]


def test_unknown_adapter_of_a_spec_built_directly_fails_at_load():
    from rmeval.models import load_scorer
    from rmeval.models.base import Runtime

    with pytest.raises(RmevalError, match="model 'x': unknown adapter 'prn'; did you mean 'prm'"):
        load_scorer(ModelSpec(name="x", path="p", adapter="prn"), Runtime(device="cpu", dtype="float32"))
    with pytest.raises(RmevalError, match="model 'x': options.stp_tag: unknown option for adapter 'prm'"):
        load_scorer(ModelSpec(name="x", path="p", adapter="prm", options={"stp_tag": "x"}),
                    Runtime(device="cpu", dtype="float32"))


# ----------------------------------------------------------------------------- the schema of config/models.yaml
def test_schema_entry_fields_are_the_model_spec_fields():
    entry = load_schema(MODELS_SCHEMA)["$defs"]["entry"]
    assert list(entry["properties"]) == [f.name for f in fields(ModelSpec)]
    assert list(entry["properties"]["resources"]["properties"]) == [f.name for f in fields(ModelResources)]


def test_shipped_registry_is_valid_against_the_schema_and_snakemake_validate_agrees():
    document = yaml.safe_load((REPO_ROOT / "config" / "models.yaml").read_text())
    assert config_problems(document, load_schema(MODELS_SCHEMA)) == []
    validate(document, str(MODELS_SCHEMA))  # snakemake.utils.validate resolves the schema's own $refs


def _registry_file(tmp_path, text: str):
    path = tmp_path / "models.yaml"
    path.write_text(text)
    return path


def test_registry_problems_are_one_line_each_naming_file_and_key(tmp_path):
    path = _registry_file(tmp_path, (
        "models:\n"
        "  my-prm:\n    path: org/prm\n    adapter: prm\n    options: {step_tg: x}\n"
        "  my-rm:\n    path: org/rm\n    dtype: fp16\n"
        "  my-judge:\n    path: org/judge\n    adapter: judge\n    options: {mode: direct, base_url: 'http://h/v1'}\n"
    ))
    with pytest.raises(ConfigError) as raised:
        load_registry(path)
    assert str(raised.value).splitlines() == [
        f"{path}: 1 problem (see config/README.md for every key):",
        "  models.my-rm.dtype: got 'fp16'; allowed: auto, float32, bfloat16, float16",
    ]
    path.write_text(path.read_text().replace("fp16", "float16"))
    with pytest.raises(ConfigError) as raised:
        load_registry(path)
    assert raised.value.problems == [
        "models.my-prm.options.step_tg: unknown option for adapter 'prm'; did you mean `step_tag`? allowed: "
        "step_tag, good_token, bad_token, step_separator, good_token_id, bad_token_id"]
    assert str(raised.value).startswith(f"{path}: 1 problem")
    path.write_text(path.read_text().replace("step_tg", "step_tag"))
    assert load_registry(path)["my-judge"].judge_mode == "direct"


def test_registry_document_shape(tmp_path):
    for text, line in (("modles: {}\n", "modles: unknown key; did you mean `models`?"),
                       ("models: [a, b]\n", "models: got ['a', 'b'] (a list); expected a mapping")):
        with pytest.raises(ConfigError) as raised:
            load_registry(_registry_file(tmp_path, text))
        assert line in raised.value.problems, raised.value.problems


def test_inline_config_models_are_checked_by_the_same_entry_schema():
    schema_path = merged_schema_file()  # with the benchmarks' own sections (RewardMATH's)
    config = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
    config["models"].append({"name": "mine", "path": "org/rm", "dtype": "float16", "resources": {"gpu": 0}})
    config["rewardmath"] = {"enabled": True, "models": [{"name": "prm", "path": "org/prm", "adapter": "prm"}]}
    written = copy.deepcopy(config)
    ours = copy.deepcopy(config)
    check_config(ours, config_schema())
    validate(config, str(schema_path))  # snakemake follows the $ref into models.schema.yaml
    # snakemake also fills each entry's defaults; ours keeps an entry as written (models.schema.yaml's
    # x-fill-defaults: false: the lock hashes the config), and ModelSpec applies the same defaults
    for filled, kept in ((config["models"], ours["models"]),
                         (config["rewardmath"]["models"], ours["rewardmath"]["models"])):
        for theirs, mine in zip(filled, kept, strict=True):
            assert isinstance(theirs, str) or spec_from_mapping(theirs, "filled") == spec_from_mapping(mine, "kept")
    assert config["models"][-1]["resources"]["mem_mb"] == ModelResources().mem_mb
    assert ours["models"] == written["models"] and ours["rewardmath"]["models"] == written["rewardmath"]["models"]
    config["models"], config["rewardmath"]["models"] = ours["models"], ours["rewardmath"]["models"]
    assert ours == config
    config["models"][-1]["resources"] = {"gpus": 0}
    config["rewardmath"]["models"][0]["max_lenght"] = 10
    assert config_problems(config, config_schema()) == [
        "models[1].resources.gpus: unknown key; did you mean `gpu`?",
        "rewardmath.models[0].max_lenght: unknown key; did you mean `max_length`?",
    ]
