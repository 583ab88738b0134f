"""rmeval.preflight: what a run lacks, found before its first job (network, HF cache, API keys, local files).

The arXiv stage's needs come from the fairness benchmark (rmeval.benchmarks.fairness.arxiv.preflight), as its
planner hands them to the run plan."""

from __future__ import annotations

import gzip
import json
import socket
import time
from pathlib import Path

import pytest
from rmeval import preflight
from rmeval.benchmarks.fairness.arxiv.preflight import arxiv_needs
from rmeval.preflight import Plan, collect, jobs_filter, missing_inputs, reachability, tcp_probe
from rmeval.registry import load_registry
from workflow_helpers import REPO_ROOT

REGISTRY = load_registry(REPO_ROOT / "config" / "models.yaml")
SKYWORK = REGISTRY["Skywork-Reward-V2-Qwen3-0.6B"]
NEMOTRON = REGISTRY["Nemotron-4-340B-Reward"]
API = {"source": "api", "api": {"base_url": "https://export.arxiv.org/api/query"}}
SCORE_RULES = frozenset({"download_model", "score_fairness"})


def arxiv_plan(arxiv: dict, snapshot: str | None, models: dict, **keys: str) -> Plan:
    """The run's preflight plan with the fairness benchmark's arXiv needs, as rmeval.run_plan builds it."""
    return Plan(models=models, model_keys=keys, score_rules=SCORE_RULES, needs=(arxiv_needs(arxiv, snapshot),))


def unreachable(host: str, port: int, timeout: float) -> str:
    return f"DNS lookup of {host} failed: Name or service not known"


def reachable(host: str, port: int, timeout: float) -> None:
    return None


def never_cached(repo: str, revision: str | None) -> bool:
    return False


def test_quickstart_without_network_gives_one_line_for_arxiv_and_one_for_the_model():
    plan = arxiv_plan(API, None, {SKYWORK.name: SKYWORK}, **{SKYWORK.name: f"models[0] ({SKYWORK.name})"})
    problems = collect(plan, env={}, probe=unreachable, in_cache=never_cached)
    lines = [problem.line() for problem in problems]
    assert len(lines) == 2, lines
    assert lines[0].startswith("arxiv.source: 'api' needs export.arxiv.org, which is unreachable (DNS lookup")
    assert "arxiv.source: snapshot" in lines[0] and "Offline and air-gapped runs" in lines[0]
    assert lines[1].startswith("models: Skywork-Reward-V2-Qwen3-0.6B is not in the Hugging Face cache")
    assert "huggingface.co is unreachable" in lines[1] and "HF_HOME" in lines[1]


def test_nothing_to_report_with_network_or_with_the_model_cached():
    plan = arxiv_plan(arxiv=API, snapshot=None, models={SKYWORK.name: SKYWORK})
    assert collect(plan, env={}, probe=reachable, in_cache=never_cached) == []
    assert collect(plan, env={}, probe=unreachable, in_cache=lambda repo, rev: True)[0].key == "arxiv.source"


def test_loopback_base_url_needs_no_network():
    plan = arxiv_plan(arxiv={"source": "api", "api": {"base_url": "http://127.0.0.1:8/api/query"}}, snapshot=None,
                models={})
    assert collect(plan, env={}, probe=unreachable) == []


def test_hf_hub_offline_with_an_uncached_model_is_named_without_probing():
    def no_probe(host: str, port: int, timeout: float) -> None:
        raise AssertionError("HF_HUB_OFFLINE: nothing to probe")

    plan = arxiv_plan(arxiv={"source": "snapshot"}, snapshot=None, models={SKYWORK.name: SKYWORK})
    (problem,) = collect(plan, env={"HF_HUB_OFFLINE": "1"}, probe=no_probe, in_cache=never_cached)
    assert "not in the Hugging Face cache" in problem.what and "HF_HUB_OFFLINE is set" in problem.what


def test_api_model_without_its_key_variable_is_named():
    # Item 11 of issue 13: the paper config planned its Nemotron jobs without a word about NVIDIA_API_KEY.
    plan = arxiv_plan({"source": "snapshot"}, None, {NEMOTRON.name: NEMOTRON},
                      **{NEMOTRON.name: "models[7] (Nemotron-4-340B-Reward)"})
    (problem,) = collect(plan, env={}, probe=reachable)
    assert problem.line().startswith(
        "models[7] (Nemotron-4-340B-Reward): NVIDIA_API_KEY (options.api_key_env) is not set")
    assert "export NVIDIA_API_KEY=" in problem.line()
    assert collect(plan, env={"NVIDIA_API_KEY": "nvapi-test"}, probe=reachable) == []


def test_local_model_folders_must_hold_a_model(tmp_path, tiny_model_dir):
    from rmeval.registry import spec_from_mapping

    empty = tmp_path / "empty"
    empty.mkdir()
    specs = {name: spec_from_mapping({"name": name, "path": str(path)}, where="test")
             for name, path in (("gone", tmp_path / "missing"), ("empty", empty), ("tiny", tiny_model_dir))}
    problems = collect(arxiv_plan(arxiv={"source": "snapshot"}, snapshot=None, models=specs), env={}, probe=reachable)
    assert [(p.key, p.models) for p in problems] == [("models (gone).path", {"gone"}),
                                                      ("models (empty).path", {"empty"})]
    assert "does not exist" in problems[0].what and "no config.json" in problems[1].what


def _snapshot(path: Path, records: list[dict]) -> Path:
    with gzip.open(path, "wt") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return path


def test_snapshot_missing_and_snapshot_without_categories(tmp_path):
    gone = arxiv_plan(arxiv={"source": "snapshot", "snapshot": "inputs/x.json.gz"}, snapshot=str(tmp_path / "x.json.gz"),
                models={})
    (problem,) = missing_inputs(gone)
    assert problem.line().startswith("arxiv.snapshot: file not found: inputs/x.json.gz")
    assert "Snapshot format" in problem.line()

    record = {"id": "0704.0001", "title": "T", "abstract": "A", "versions": [], "update_date": "2008-11-13"}
    path = _snapshot(tmp_path / "no_categories.json.gz", [record])
    plan = arxiv_plan(arxiv={"source": "snapshot"}, snapshot=str(path), models={})
    assert missing_inputs(plan) == []
    (problem,) = collect(plan, env={}, probe=reachable)
    assert "its first record has no `categories` field" in problem.what
    _snapshot(path, [{**record, "categories": 7}])
    assert "not a space-separated string" in collect(plan, env={}, probe=reachable)[0].what
    undated = {key: value for key, value in record.items() if key not in ("versions", "update_date")}
    _snapshot(path, [{**undated, "categories": "math.CO"}])
    assert collect(plan, env={}, probe=reachable) == []  # no date window: no date needed
    windowed = arxiv_plan(arxiv={"source": "snapshot", "date_from": "2020-01-01"}, snapshot=str(path), models={})
    assert "no `versions or update_date` field" in collect(windowed, env={}, probe=reachable)[0].what
    _snapshot(path, [{**record, "categories": "math.CO cs.DM"}])
    assert collect(plan, env={}, probe=reachable) == []


def test_only_problems_of_jobs_that_will_run_count():
    plan = arxiv_plan(arxiv=API, snapshot=None, models={SKYWORK.name: SKYWORK, NEMOTRON.name: NEMOTRON})

    class Rule:
        def __init__(self, name: str) -> None:
            self.name = name

    class Job:
        def __init__(self, rule: str, **wildcards: str) -> None:
            self.rule, self.wildcards_dict = Rule(rule), wildcards

    only_skywork = jobs_filter([Job("score_fairness", model=SKYWORK.name, group="physics"), Job("fairness_stats")])
    (problem,) = collect(plan, only_skywork, env={}, probe=unreachable, in_cache=never_cached)
    assert problem.models == {SKYWORK.name}
    assert collect(plan, jobs_filter([Job("fairness_stats")]), env={}, probe=unreachable) == []


def test_real_tcp_probe_against_a_local_server_and_a_closed_port():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert tcp_probe("127.0.0.1", port, 2.0) is None
    reason = tcp_probe("127.0.0.1", port, 2.0)
    assert reason and "cannot connect to 127.0.0.1" in reason and "refused" in reason.lower()
    assert "DNS lookup of no-such-host.invalid failed" in tcp_probe("no-such-host.invalid", 443, 2.0)


def test_probes_run_at_once_and_wait_at_most_the_timeout():
    def slow(host: str, port: int, timeout: float) -> None:
        time.sleep(5)

    started = time.monotonic()
    answers = reachability(["https://a.example/x", "https://b.example/y"], probe=slow, timeout=0.3)
    assert time.monotonic() - started < 2
    assert answers["https://a.example/x"] == "no answer from a.example:443 within 0.3 s"


def test_a_proxy_is_probed_instead_of_the_host(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    seen = []

    def record(host: str, port: int, timeout: float) -> str:
        seen.append((host, port))
        return "refused"

    answers = reachability(["https://huggingface.co"], probe=record)
    assert seen == [("127.0.0.1", 9)] and answers["https://huggingface.co"] == "refused through proxy 127.0.0.1:9"


@pytest.mark.parametrize(("value", "expected"), [(None, "on"), ("warn", "on"), ("0", "off"), ("off", "off")])
def test_mode(value, expected):
    env = {} if value is None else {"RMEVAL_PREFLIGHT": value}
    assert preflight.mode(env) == (value if value == "warn" else expected)


def test_bad_mode_is_an_error():
    with pytest.raises(ValueError, match="RMEVAL_PREFLIGHT='maybe': expected on, warn or off"):
        preflight.mode({"RMEVAL_PREFLIGHT": "maybe"})
