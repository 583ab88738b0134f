"""`snakemake --lint` and `snakemake -n` on the shipped configs: the paper's, the quick start, and a user config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from workflow_helpers import PAPER_GROUPS, REPO_ROOT, run_snakemake_process


def _snakemake(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return run_snakemake_process(args, cwd=cwd, timeout=300)


def _jobs_by_rule(stdout: str) -> dict[str, int]:
    """Parse the 'Job stats' table that `snakemake -n` prints."""
    counts: dict[str, int] = {}
    in_table = False
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
            continue
        if in_table and len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
        elif in_table and parts and parts[0] == "total":
            break
    return counts


def test_lint_is_clean():
    result = _snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_dry_run_paper_config_plans_every_model_group_job():
    result = _snakemake("-n", "--quiet", "rules")
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = _jobs_by_rule(result.stdout)
    assert jobs.get("score_fairness") == 8 * 8, jobs
    assert jobs.get("arxiv_fetch") == 8, jobs
    assert jobs.get("fairness_stats") == 1, jobs


def test_dry_run_quickstart_config():
    result = _snakemake("-n", "--quiet", "rules", "--configfile", "config/quickstart.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = _jobs_by_rule(result.stdout)
    assert jobs.get("score_fairness") == 8, jobs


def test_dry_run_leaderboard_config():
    """Today's open RMs (config/leaderboard.yaml): five ORMs on the fairness benchmark and RewardBench 2, all seven on
    RewardMATH."""
    text = (REPO_ROOT / "config" / "leaderboard.yaml").read_text()
    assert all(word in text for word in ("GPUs:", "Disk:", "Time:"))  # the resources a user needs, in its header
    result = _snakemake("-n", "--quiet", "rules", "--configfile", "config/leaderboard.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = _jobs_by_rule(result.stdout)
    assert jobs.get("score_fairness") == 8 * 5 and jobs.get("rewardmath_score") == 7 * 8, jobs
    assert jobs.get("rewardbench2_score") == 5, jobs  # one score file per model, every completion in it
    assert jobs.get("download_model") == 7, jobs


def test_user_config_replaces_paper_groups(tmp_path):
    # A user's smaller config must not be merged with the paper's eight groups.
    config = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
    config["groups"] = {name: PAPER_GROUPS[name] for name in ("mathematics", "economics")}
    configfile = tmp_path / "two_groups.yaml"
    configfile.write_text(yaml.safe_dump(config))
    result = _snakemake("-n", "--quiet", "rules", "--configfile", str(configfile))
    assert result.returncode == 0, result.stdout + result.stderr
    assert _jobs_by_rule(result.stdout).get("score_fairness") == 2


# Through `snakemake -n`: a schema problem (the Snakefile's check_config) and a registry one (the model plan).
# Every other kind of bad value goes through the same check_config call, judged in-process key by key in
# tests/drills/test_drill_config.py (wrong types, ranges, missing keys, empty groups) and test_config_check.py.
@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda c: c.update(models=["No-Such-Model"]), "No-Such-Model"),
        (lambda c: c.update(modles=["x"]), "modles"),
    ],
    ids=["unknown-model", "unknown-key"],
)
def test_bad_config_is_rejected_naming_the_key(tmp_path, mutate, expected):
    config = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
    mutate(config)
    configfile = tmp_path / "bad.yaml"
    configfile.write_text(yaml.safe_dump(config))
    result = _snakemake("-n", "--configfile", str(configfile))
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr


def test_paper_config_defines_the_papers_eight_groups():
    # The one place the paper's group definition is spelled out; every other test reads config/config.yaml.
    physics = ["astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph", "nlin",
               "nucl-ex", "nucl-th", "physics", "quant-ph"]
    assert PAPER_GROUPS == {
        "physics": physics, "mathematics": ["math"], "computer_science": ["cs"], "economics": ["econ"],
        "electrical_engineering": ["eess.AS", "eess.IV", "eess.SP"], "systems_science": ["eess.SY"],
        "quantitative_biology": ["q-bio"], "quantitative_finance": ["q-fin"],
    }
    config = yaml.safe_load((REPO_ROOT / "config" / "config.yaml").read_text())
    assert config["arxiv"]["papers_per_group"] == 2000 and len(config["models"]) == 8
    assert config["reference_model"] == "Nemotron-4-340B-Reward"


# ----------------------------------------------------------------------------- any subset of benchmarks runs alone
def _dry_run(tmp_path: Path, config: dict, name: str) -> dict[str, int]:
    configfile = tmp_path / f"{name}.yaml"
    configfile.write_text(yaml.safe_dump(config))
    result = _snakemake("-n", "--quiet", "rules", "--configfile", str(configfile))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return _jobs_by_rule(result.stdout)


def test_rewardmath_alone_plans_no_fairness_job(tmp_path):
    """`models` and `rewardmath:` only: no groups to invent; RewardMATH and the run-level outputs."""
    config = {"models": ["Skywork-Reward-V2-Qwen3-0.6B"],
              "rewardmath": {"enabled": True, "models": ["Skywork-Reward-V2-Qwen3-0.6B"]}}
    jobs = _dry_run(tmp_path, config, "rewardmath_only")
    assert jobs.get("rewardmath_score") == 8 and jobs.get("rewardmath_metrics") == 1, jobs
    assert {"run_summary", "run_reproduction", "lock"} <= set(jobs), jobs
    assert not [rule for rule in jobs if "fairness" in rule or "arxiv" in rule], jobs


def test_a_fairness_group_may_share_a_name_with_a_benchmark(tmp_path):
    """A fairness group called `rewardbench` beside RewardBench 1: the score files are namespaced by benchmark
    (results/scores/<benchmark>/{model}/{table}.parquet), so neither rule is ambiguous."""
    config = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
    config["groups"] = {"rewardbench": ["cs"], "mathematics": ["math"]}
    config["rewardbench"] = {"enabled": True, "source": "local", "path": "rb.jsonl"}
    (tmp_path / "rb.jsonl").write_text('{"id": 1, "prompt": "p", "chosen": "a", "chosen_model": "m", '
                                       '"rejected": "b", "rejected_model": "m", "subset": "alpacaeval-easy"}\n')
    configfile = tmp_path / "clash.yaml"
    configfile.write_text(yaml.safe_dump(config))
    result = run_snakemake_process(["-s", str(REPO_ROOT / "Snakefile"), "-n", "--quiet", "rules", "--configfile",
                                    str(configfile)], cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    jobs = _jobs_by_rule(result.stdout)
    assert jobs.get("score_fairness") == 2 and jobs.get("rewardbench_score") == 1, jobs


# Every shipped config dry-runs (the ones above with their job counts; the rest here, found by globbing, so a new
# config is checked with no line added), in a working directory holding the two inputs offline.yaml asks a user to
# put there first (its header); preflight is off, since they are stand-ins.
CHECKED_ABOVE = {"config.yaml", "quickstart.yaml", "leaderboard.yaml"}
SHIPPED_CONFIGS = sorted(str(path.relative_to(REPO_ROOT)) for path in (REPO_ROOT / "config").rglob("*.yaml")
                         if path.name != "models.yaml" and path.name not in CHECKED_ABOVE)


@pytest.mark.parametrize("configfile", SHIPPED_CONFIGS)
def test_every_shipped_config_dry_runs(configfile, tmp_path):
    import os

    (tmp_path / "inputs/models/Skywork-Reward-V2-Qwen3-0.6B").mkdir(parents=True)
    (tmp_path / "inputs/arxiv-metadata-oai-snapshot.json.gz").write_bytes(b"")
    result = run_snakemake_process(["-s", str(REPO_ROOT / "Snakefile"), "-n", "--quiet", "rules", "--configfile",
                                    str(REPO_ROOT / configfile)], cwd=tmp_path,
                                   env={**os.environ, "RMEVAL_PREFLIGHT": "off"}, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert _jobs_by_rule(result.stdout).get("lock") == 1
