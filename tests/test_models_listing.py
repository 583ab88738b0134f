"""`rmeval models`, the fidelity-fixture index it reads, and the registry's `attn_implementation` field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from rmeval.cli import main as cli_main
from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec, load_registry, spec_from_mapping
from rmeval.registry_listing import FIXTURE_INDEX, fixture_index, fixture_status, parameters, rows

REPO_ROOT = Path(__file__).resolve().parents[1]
REGISTRY = load_registry(REPO_ROOT / "config" / "models.yaml")


def test_every_local_entry_names_a_fixture_test_that_exists() -> None:
    index = fixture_index()
    assert index is not None and FIXTURE_INDEX == REPO_ROOT / "tests" / "fidelity_fixtures.yaml"
    assert set(index) == set(REGISTRY), "one line per registry entry"
    for name, spec in REGISTRY.items():
        status = fixture_status(name, index)
        if not spec.adapter_entry.judge:
            assert status.startswith("yes ("), f"{name}: {status}"


def test_a_fixture_test_that_is_gone_shows_as_missing() -> None:
    index = {"m": "tests/test_models_parity_recent.py::test_not_there", "n": None}
    assert fixture_status("m", index).startswith("missing (")
    assert fixture_status("n", index) == "no" and fixture_status("m", None).startswith("unknown")


def test_parameters_from_the_entry_else_from_the_name() -> None:
    assert parameters(REGISTRY["INF-ORM-Llama3.1-70B"]) == "70B"
    assert parameters(REGISTRY["Skywork-Reward-V2-Qwen3-0.6B"]) == "0.6B (name)"
    assert parameters(REGISTRY["FsfairX-LLaMA3-RM-v0.1"]) == "?"


def test_rmeval_models_lists_the_registry(capsys) -> None:
    assert cli_main(["models", "--registry", str(REPO_ROOT / "config" / "models.yaml")]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    assert lines[0] == "| model | adapter | parameters | GPUs | revision | fidelity fixture |"
    assert len(lines) == 1 + len(REGISTRY)
    row = next(line for line in lines if line.startswith("| INF-ORM-Llama3.1-70B |"))
    assert "| inf-orm | 70B | 4 | main (pinned by the lock) | yes (tests/test_models_parity_recent.py::" in row
    assert [r.name for r in rows(REGISTRY, None)] == list(REGISTRY)


def test_attn_implementation_defaults_to_sdpa_and_keeps_old_spec_json() -> None:
    plain = ModelSpec(name="n", path="p")
    assert plain.attn_implementation == "sdpa" and "attn_implementation" not in plain.to_json()
    eager = spec_from_mapping({"name": "n", "path": "p", "attn_implementation": "eager"}, where="t")
    assert '"attn_implementation": "eager"' in eager.to_json()
    assert ModelSpec.from_json(eager.to_json()) == eager and ModelSpec.from_json(plain.to_json()) == plain
    gemma = REGISTRY["Skywork-Reward-Gemma-2-27B-v0.2"]
    assert gemma.attn_implementation == "flash_attention_2"
    assert {spec.attn_implementation for name, spec in REGISTRY.items()
            if name != gemma.name and spec.adapter_entry.loads_model} == {"sdpa"}


def test_attn_implementation_is_checked() -> None:
    with pytest.raises(RmevalError, match="attn_implementation"):
        spec_from_mapping({"name": "n", "path": "p", "attn_implementation": "flash"}, where="t")
    remote = yaml.safe_load((REPO_ROOT / "config" / "models.yaml").read_text())["models"]["Nemotron-4-340B-Reward"]
    with pytest.raises(RmevalError, match="attn_implementation: adapter 'nemotron-api' scores over HTTP"):
        spec_from_mapping({**remote, "name": "x", "attn_implementation": "eager"}, where="t")


def test_the_lock_records_flash_attn_when_the_jobs_had_it(tmp_path: Path) -> None:
    import importlib.metadata as metadata
    import json

    from rmeval.lock.build import software_versions

    with_it = tmp_path / "a.meta.json"
    with_it.write_text(json.dumps({"versions": {"torch": "2.13.0", "flash-attn": "2.7.4.post1"}}))
    assert software_versions({"bench": [with_it]})["flash-attn"] == "2.7.4.post1"
    without = tmp_path / "b.meta.json"
    without.write_text(json.dumps({"versions": {"torch": "2.13.0"}}))
    try:
        installed = metadata.version("flash-attn")
    except metadata.PackageNotFoundError:
        installed = None
    assert software_versions({"bench": [without]}).get("flash-attn") == installed  # absent here: no key


def test_an_http_adapter_takes_no_attention_default_and_round_trips() -> None:
    """The schema's `attn_implementation: sdpa` applies to models loaded here, not to an HTTP adapter's entry; a
    parsed entry written back (`asdict`) parses again to the same spec, and its spec JSON is what it was."""
    from dataclasses import asdict

    remote = REGISTRY["Nemotron-4-340B-Reward"]
    assert remote.adapter_entry.remote and remote.attn_implementation is None
    assert "attn_implementation" not in remote.to_json()
    assert spec_from_mapping(asdict(remote), where="t") == remote
    local = REGISTRY["Skywork-Reward-V2-Qwen3-0.6B"]
    assert spec_from_mapping(asdict(local), where="t") == local and local.attn_implementation == "sdpa"
