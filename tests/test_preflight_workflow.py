"""Real Snakemake runs of what a new user meets first: the quick start without network (the `quickstart` scenario of
.test/), the paper config's dry run without NVIDIA_API_KEY, a failing job's log on the console, allow_fewer's
warning on the console, and `rewardmath.models` naming a model defined inline under `models:`."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml
from scenarios import Scenario
from workflow_helpers import REPO_ROOT, run_snakemake_process

# Every probe goes to this proxy, a closed port on loopback: "no network", the same on every machine, and not
# one packet leaves the host.
NO_NETWORK = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
TWO_GROUPS = {"mathematics": ["math"], "economics": ["econ"]}


def snakemake(workdir: Path, configfile: Path | None, *args: str, env: dict[str, str] | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess:
    argv = ["-s", str(REPO_ROOT / "Snakefile"), "--directory", str(workdir),
            *(["--configfile", str(configfile)] if configfile else []), *args]
    base = {k: v for k, v in os.environ.items()
            if k not in ("NVIDIA_API_KEY", "NO_PROXY", "no_proxy", "RMEVAL_PREFLIGHT", "HF_HUB_OFFLINE")}
    return run_snakemake_process(argv, env={**base, **(env or {})}, timeout=timeout)


def write_snapshot(path: Path, per_category: dict[str, int]) -> Path:
    """A Kaggle-format snapshot (the fields rmeval.benchmarks.fairness.arxiv.snapshot reads) with n papers per category."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        serial = 0
        for category, count in per_category.items():
            for _ in range(count):
                serial += 1
                handle.write(json.dumps({
                    "id": f"2101.{serial:05d}", "title": f"Paper number {serial} on {category}",
                    "abstract": f"We study question {serial} in {category} and prove a theorem about it.",
                    "categories": category, "update_date": "2021-01-04",
                    "versions": [{"version": "v1", "created": "Mon, 4 Jan 2021 10:00:00 GMT"}],
                }) + "\n")
    return path


def write_config(path: Path, **overrides: Any) -> Path:
    config: dict[str, Any] = {
        "groups": TWO_GROUPS,
        "arxiv": {"source": "snapshot", "snapshot": "inputs/snapshot.json.gz", "papers_per_group": 5},
        "registry": str(REPO_ROOT / "config" / "models.yaml"),
        "models": [{"name": "bad", "path": "./inputs/not-a-model", "resources": {"gpu": 0}}],
        "reference_model": None,
    }
    config.update(overrides)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_quickstart_without_network_stops_before_any_job_saying_why(tmp_path):
    # Issue 13, Seen 1: the main job failed after 162 s with a CalledProcessError; the reasons were under logs/.
    started = time.monotonic()
    result = snakemake(tmp_path, Scenario("quickstart").configfile, "--cores", "2",
                       env={**NO_NETWORK, "HF_HOME": str(tmp_path / "empty-hf-home")})
    elapsed = time.monotonic() - started
    console = result.stdout + result.stderr
    assert result.returncode != 0
    assert "preflight: 2 problems before the first job:" in console, console
    assert "  arxiv.source: 'api' needs export.arxiv.org, which is unreachable (" in console
    assert "  models: Skywork-Reward-V2-Qwen3-0.6B is not in the Hugging Face cache" in console
    assert str(tmp_path / "empty-hf-home") in console and "Offline and air-gapped runs" in console
    assert "Nothing was run." in console
    # Issue 36: the route that runs now, with no network, comes first: the demo, then the offline config.
    assert "No network here? `snakemake --cores 2 --configfile config/demo.yaml` runs a whole workflow" in console
    assert console.index("config/demo.yaml") < console.index("config/offline.yaml")
    assert not (tmp_path / "logs").exists() and not (tmp_path / "results").exists(), "a job ran"
    assert elapsed < 120, f"the first error took {elapsed:.0f} s"


def test_paper_config_dry_run_warns_that_nvidia_api_key_is_unset(tmp_path):
    # Issue 13, Seen 11: the paper config planned its 8 Nemotron jobs without a word.
    paper = REPO_ROOT / "config" / "config.yaml"
    result = snakemake(tmp_path, paper, "-n", "--quiet", "rules",
                       env={**NO_NETWORK, "HF_HOME": str(tmp_path / "empty-hf-home")})
    console = result.stdout + result.stderr  # a dry run logs to stdout
    assert result.returncode == 0, console[-3000:]
    assert "models[7] (Nemotron-4-340B-Reward): NVIDIA_API_KEY (options.api_key_env) is not set" in console, console
    assert "A real run stops here, before its first job" in console
    with_key = snakemake(tmp_path, paper, "-n", "--quiet", "rules",
                         env={**NO_NETWORK, "HF_HOME": str(tmp_path / "empty-hf-home"), "NVIDIA_API_KEY": "x"})
    assert with_key.returncode == 0 and "NVIDIA_API_KEY" not in with_key.stdout + with_key.stderr


def test_a_failing_jobs_log_reaches_the_console_and_preflight_catches_it_first(tmp_path):
    write_snapshot(tmp_path / "inputs" / "snapshot.json.gz", {"math.CO": 6, "econ.GN": 6})
    configfile = write_config(tmp_path / "bad_model.yaml")
    target = "results/models/bad.downloaded.json"
    # RMEVAL_PREFLIGHT=warn reports and runs anyway; the job fails and the default profile prints its log.
    result = snakemake(tmp_path, configfile, "--cores", "1", target, env={"RMEVAL_PREFLIGHT": "warn"})
    assert result.returncode != 0
    assert "RMEVAL_PREFLIGHT=warn: running anyway." in result.stderr, result.stderr[-3000:]
    assert "Using workflow specific profile" in result.stderr and "profiles/default" in result.stderr
    assert "Logfile logs/download_model/bad.log:" in result.stderr, result.stderr[-3000:]
    assert "path './inputs/not-a-model' is not a model folder (no config.json)" in result.stderr
    # With it, nothing runs and one line names the key.
    (tmp_path / "logs" / "download_model" / "bad.log").unlink()
    result = snakemake(tmp_path, configfile, "--cores", "1", target)
    assert result.returncode != 0
    assert ("  models[0] (bad).path: local model folder ./inputs/not-a-model does not exist; point it at a folder"
            in result.stderr), result.stderr[-3000:]
    assert not (tmp_path / "logs" / "download_model" / "bad.log").exists()


def test_missing_snapshot_stops_every_mode_naming_every_problem_at_once(tmp_path):
    # Issue 36: preflight named one problem per run (the snapshot; after fixing it, the model folder).
    configfile = write_config(tmp_path / "no_snapshot.yaml")
    for mode in (["-n"], ["--cores", "1"]):
        result = snakemake(tmp_path, configfile, *mode)
        console = result.stdout + result.stderr
        assert result.returncode != 0
        assert "preflight: 2 problems before the first job:" in console, console[-3000:]
        assert ("  arxiv.snapshot: file not found: inputs/snapshot.json.gz (a relative path is read from the working "
                "directory)") in console, console[-3000:]
        assert "  models[0] (bad).path: local model folder ./inputs/not-a-model does not exist" in console
        assert "MissingInputException" not in console


def test_allow_fewer_balanced_warning_reaches_the_console(tmp_path):
    # Issue 13, Seen 6: the warning was only in logs/arxiv/select.log.
    write_snapshot(tmp_path / "inputs" / "snapshot.json.gz", {"math.CO": 7, "econ.GN": 4})
    configfile = write_config(tmp_path / "fewer.yaml", arxiv={
        "source": "snapshot", "snapshot": "inputs/snapshot.json.gz", "papers_per_group": 5, "allow_fewer": True})
    result = snakemake(tmp_path, configfile, "--cores", "1", "results/data/mathematics.parquet")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "warning: allow_fewer=balanced: every group gets 4 papers" in result.stderr, result.stderr[-3000:]
    assert "economics: 4 papers < 5: not enough eligible papers" in result.stderr
    log = (tmp_path / "logs" / "arxiv" / "select.log").read_text()
    assert "allow_fewer=balanced" in log and "arxiv-select economics: eligible=4" in log
    for group in TWO_GROUPS:
        assert json.loads((tmp_path / "results" / "data" / f"{group}.manifest.json").read_text())[
            "counts"]["sampled"] == 4


def test_rewardmath_models_may_name_an_inline_model(tmp_path):
    # Issue 13, Seen 7: `rewardmath.models` could not name a model defined inline under `models:`.
    write_snapshot(tmp_path / "inputs" / "snapshot.json.gz", {"math.CO": 6, "econ.GN": 6})
    (tmp_path / "inputs" / "rewardmath.jsonl").write_text("{}\n")
    configfile = write_config(tmp_path / "inline.yaml", rewardmath={
        "enabled": True, "source": "local", "path": "inputs/rewardmath.jsonl", "rewardbench_source": "none",
        "subjects": ["algebra"], "models": ["bad"]})
    result = snakemake(tmp_path, configfile, "-n", "--quiet", "rules")
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = dict(line.split() for line in result.stdout.splitlines()
                if len(line.split()) == 2 and line.split()[1].isdigit())
    assert jobs.get("rewardmath_score") == "1" and jobs.get("score_fairness") == "2", result.stdout
