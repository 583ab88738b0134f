"""LLM judges end to end: a real `snakemake` run of both branches with one direct and one pairwise judge against
the loopback judge server (tests/judge_server.py; the `both-branches` scenario of .test/), then a rerun from scratch
that must send no request; and one run of `rmeval score` against a real OpenAI-compatible server process (`transformers
serve` on a tiny local causal LM built offline), where whatever the model says, the run completes, nulls are counted
and no row is lost."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from judge_server import JUDGE_MODEL
from scenarios import JUDGE_KEY_ENV, JUDGE_SECRET, JudgedRun, judge_entries
from workflow_helpers import run_snakemake


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.e2e
def test_snakemake_with_a_direct_and_a_pairwise_judge(both_branches_run: JudgedRun, tmp_path: Path) -> None:
    """The `both-branches` scenario of .test/, its judges pointed at the loopback server (conftest.py)."""
    run, server, sent = both_branches_run.run, both_branches_run.server, both_branches_run.requests
    config, workdir = run.config, run.workdir
    assert {(judge["path"], judge["options"]["api_key_env"]) for judge in judge_entries(config)} == {
        (JUDGE_MODEL, JUDGE_KEY_ENV)}
    # RewardMATH: 20 direct + 18 pairwise; RewardBench (4 pairs): 8 direct + 4 pairwise; fairness: one per
    # paper; 2 retries (the 429 and the 500).
    papers = len(config["groups"]) * config["arxiv"]["papers_per_group"]
    assert sent == 20 + 18 + 8 + 4 + papers + 2, sent
    assert dict(server.faults_served) == {"429": 1, "500": 1}

    results = run.results
    metrics = {(r["setup"], r["aggregation"]): r for r in _csv(results / "tables" / "rewardmath_metrics_ci.csv")}
    assert metrics["judge-direct", "scalar"]["kind"] == "LLM judge"  # shown as "direct" in Markdown / LaTeX
    assert metrics["judge-pairwise", "pairwise"]["kind"] == "LLM judge"
    assert metrics["judge-direct", "scalar"]["n"] == metrics["judge-pairwise", "pairwise"]["n"] == "2"
    assert metrics["gpt4_reward", "scalar"]["kind"] == "LLM judge"  # the paper's judges, same table
    assert metrics["ArmoRM_reward", "scalar"]["kind"] == "classifier"
    positions = json.loads((results / "rewardmath" / "pairwise" / "positions.json").read_text())
    assert positions["tables"]["algebra"] == {"recorded": 18, "seeded": 0}
    assert positions["tables"]["rewardbench_math_prm"] == {"recorded": 0, "seeded": 4}
    side = {(r["model"], r["aggregation"]): r for r in _csv(results / "tables" / "rewardmath_vs_rewardbench.csv")}
    assert side["judge-pairwise", "pairwise"]["rewardbench_setup"] == "judge-pairwise"
    assert side["judge-direct", "scalar"]["kind"] == "LLM judge"
    table_md = (results / "tables" / "rewardmath_metrics.md").read_text()
    rows_md = {line.split("|")[1].strip().removesuffix("†").strip(): line for line in table_md.splitlines()
               if line.startswith("| judge-")}
    assert "LLM judge" in rows_md["judge-pairwise"] and "| pairwise |" in rows_md["judge-pairwise"]
    assert "LLM judge" in rows_md["judge-direct"] and "| direct |" in rows_md["judge-direct"]

    # The judges' official-layout files (only judges have one) read back to the same numbers.
    official = results / "rewardmath" / "official"
    assert sorted(p.name for p in official.glob("*.json")) == ["judge-direct.json", "judge-pairwise.json"]
    out = tmp_path / "readback"
    assert subprocess.run([sys.executable, "-m", "rmeval", "rewardmath-metrics", "--official", str(official),
                           "--out", str(out)], check=False).returncode == 0
    readback = {r["setup"]: r for r in _csv(out / "rewardmath_metrics.csv")}
    assert (readback["judge-pairwise"]["accuracy"], readback["judge-pairwise"]["mrr"]) == (
        metrics["judge-pairwise", "pairwise"]["accuracy"], metrics["judge-pairwise", "pairwise"]["mrr"])
    assert (readback["judge-direct"]["accuracy"], readback["judge-direct"]["mrr"]) == (
        metrics["judge-direct", "scalar"]["accuracy"], metrics["judge-direct", "scalar"]["mrr"])

    # The fairness tables say the judge is not part of Song et al.'s protocol.
    table1 = (results / "tables" / "table1_anova.md").read_text()
    assert "judge-direct (LLM judge†)" in table1 and "not part of Song et al." in table1
    assert any(r["note"] for r in _csv(results / "tables" / "table1_anova.csv") if r["model"] == "judge-direct")
    meta = json.loads((results / "scores" / "fairness" / "judge-direct" / "physics.meta.json").read_text())
    assert meta["adapter"] == "judge" and meta["adapter_details"]["n_judged"] == 4

    logs = "".join(p.read_text() for p in (workdir / "logs").rglob("*.log"))
    assert "HTTP 429" in logs and "HTTP 500" in logs, "the rule logs show the retried errors"
    print("\n" + (results / "tables" / "rewardmath_metrics.md").read_text())

    # A rerun from scratch of every judge's outputs, in a new run directory that has the same inputs and a copy
    # of the API cache (options.cache_dir) but no results: all replies come from the cache, and every judge score
    # and official-layout file (from which the metrics above were read back) is the same. (The shared run's own
    # results stay for the other tests that read them; the models that are not judges are not scored again.)
    rerun = tmp_path / "rerun"
    rerun.mkdir()
    (rerun / "inputs").symlink_to(workdir / "inputs")
    shutil.copytree(workdir / "api-cache", rerun / "api-cache")
    judges = sorted(judge["name"] for judge in judge_entries(config))
    judge_outputs = [f"results/rewardmath/official/{judge}.json" for judge in judges]
    judge_outputs += [f"results/scores/rewardmath/{judge}/rewardbench_math_prm.parquet" for judge in judges]
    judge_outputs += [f"results/scores/fairness/judge-direct/{group}.parquet" for group in config["groups"]]
    run_snakemake(rerun, run.configfile, "--cores", "2", *judge_outputs, env={JUDGE_KEY_ENV: JUDGE_SECRET})
    rerun_sent = server.requests - sent
    print(f"\nloopback judge server: first run {sent} requests, rerun from scratch {rerun_sent} requests")
    assert rerun_sent == 0
    def scored(folder: Path) -> list[str]:
        return sorted(p.relative_to(folder).as_posix() for p in (folder / "results").rglob("*.parquet")
                      if "scores" in p.parts)

    rescored = scored(rerun)
    # Every judge's RewardMATH and RewardBench scores and judge-direct's fairness scores; nothing else.
    assert rescored == [name for name in scored(workdir) if "/judge-" in name and (
        "/rewardmath/" in name or "judge-direct" in name)], rescored
    for name in judge_outputs:
        if name.endswith(".json"):
            assert json.loads((rerun / name).read_text()) == json.loads((workdir / name).read_text()), name
    for name in rescored:
        pd.testing.assert_frame_equal(pd.read_parquet(rerun / name), pd.read_parquet(workdir / name),
                                      check_exact=True, obj=name)

    for folder in (workdir, rerun):
        searched = [p for p in folder.rglob("*") if p.is_file()]  # the API cache included
        assert any(p.is_relative_to(folder / "api-cache") for p in searched)
        assert not [p for p in searched if JUDGE_SECRET.encode() in p.read_bytes()]
    assert JUDGE_SECRET not in run.output


# ------------------------------------------------------------------------------- a real server process
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def transformers_server(tmp_path_factory, tiny_models):
    """`transformers serve` (FastAPI + Uvicorn) on 127.0.0.1 with a tiny random-weight causal LM."""
    missing = [name for name in ("fastapi", "uvicorn", "openai") if importlib.util.find_spec(name) is None]
    if missing or shutil.which("transformers") is None:
        pytest.skip(f"`transformers serve` needs {missing or ['the transformers CLI']} (pip install -e '.[test]')")
    model_dir = tmp_path_factory.mktemp("tiny-lm") / "model"
    tiny_models.copy_to(model_dir, 0, "prm")  # a LlamaForCausalLM; a copy, as the server may write beside it
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with log.open("w") as handle:
        process = subprocess.Popen(["transformers", "serve", str(model_dir), "--host", "127.0.0.1", "--port",
                                    str(port)], stdout=handle, stderr=subprocess.STDOUT, env=env)
    import requests

    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 240
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"transformers serve exited ({process.returncode}): {log.read_text()[-3000:]}")
            try:
                if requests.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve did not answer within 240 s: {log.read_text()[-3000:]}")
            time.sleep(1)
        yield url, str(model_dir)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.parametrize("mode", ["direct", "pairwise"])
def test_real_openai_compatible_server(transformers_server, shared_data, tmp_path, mode):
    url, model = transformers_server
    sample = shared_data / "rewardmath" / "benchmark_samples"
    from rmeval.cli import main as rmeval

    assert rmeval(["rewardmath-prepare", "--source", "local", "--path", str(sample / "RewardMATH_direct.json"),
                   "--out", str(tmp_path / "data")]) == 0
    assert rmeval(["rewardmath-positions", "--data", str(tmp_path / "data"), "--positions",
                   str(sample / "RewardMATH_pairwise.json"), "--tables", "algebra", "--out", str(tmp_path / "pw")]) == 0
    data = tmp_path / ("pw" if mode == "pairwise" else "data") / "algebra.parquet"
    spec = {"name": f"tiny-{mode}", "path": model, "adapter": "judge", "max_length": 2048,
            "options": {"mode": mode, "base_url": url, "model": model, "max_tokens": 12, "max_concurrency": 2,
                        "timeout_s": 120, "cache_dir": str(tmp_path / "cache")}}
    output = tmp_path / "scores" / spec["name"] / "algebra.parquet"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # a local server needs no key
    result = subprocess.run([sys.executable, "-m", "rmeval", "score", "--spec", json.dumps(spec), "--task", "pairs",
                             "--input", str(data), "--output", str(output), "--progress-every", "0"],
                            capture_output=True, text=True, env=env, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    table = pd.read_parquet(output)
    prepared = pd.read_parquet(data)
    assert table["id"].tolist() == prepared["id"].tolist(), "no row lost, none added"
    meta = json.loads(output.with_name("algebra.meta.json").read_text())
    details = meta["adapter_details"]
    judged = table if mode == "direct" else table[table["chosen_position"].notna()]
    column = "rating" if mode == "direct" else "verdict"
    assert details["n_judged"] == len(judged) == (20 if mode == "direct" else 18)
    assert details["n_null"] == int(judged[column].isna().sum())
    assert details["requests"] == len(judged) and details["usage"]["completion_tokens"] > 0
    assert judged["replies"].map(len).eq(1).all()
    assert table["reward"].notna().all()
