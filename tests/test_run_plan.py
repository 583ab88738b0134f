"""rmeval.run_plan: what the rule files compute from the config at parse time (each enabled benchmark's plan from
its catalogue's planner: models, score jobs, pending outputs; the lock; the scoring settings), on schema-filled
configs; and the fairness planner's arXiv settings."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rmeval.cli_settings import settings_json
from rmeval.config_check import check_config, config_schema
from rmeval.errors import RmevalError
from rmeval.io.paths import config_path
from rmeval.lock.lockfile import Lock, ModelLock, config_sha256
from rmeval.registry import load_registry
from rmeval.run_plan import model_keys, plan_run
from workflow_helpers import REPO_ROOT

SCHEMA = config_schema()
QUICKSTART = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())
SKYWORK = "Skywork-Reward-V2-Qwen3-0.6B"


def locate(value: str) -> str:
    return config_path(value, REPO_ROOT)


def filled(**changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(QUICKSTART)
    for key, value in changes.items():
        config[key] = value if not isinstance(value, dict) else {**config.get(key, {}), **value}
    check_config(config, SCHEMA)
    return config


def write_lock(path: Path, revision: str) -> Path:
    spec = load_registry(REPO_ROOT / "config" / "models.yaml")[SKYWORK]
    model = ModelLock(SKYWORK, spec.adapter, spec.path, revision, "bfloat16")
    path.write_text(Lock("test", {}, "", {}, {SKYWORK: model}).to_yaml())
    return path


def test_config_path_prefers_the_working_directory_then_the_repo(tmp_path):
    (tmp_path / "mine.yaml").write_text("")
    assert config_path("mine.yaml", REPO_ROOT, workdir=tmp_path) == "mine.yaml"
    assert config_path("config/models.yaml", REPO_ROOT, workdir=tmp_path) == str(REPO_ROOT / "config/models.yaml")
    assert config_path("/abs/file", REPO_ROOT, workdir=tmp_path) == "/abs/file"


def located_inputs(value: str) -> str:
    """The run's inputs located in a stand-in folder (the registry where it is)."""
    return f"/located/{value}" if value.startswith("inputs/") else locate(value)


def test_arxiv_commands_get_the_filled_section_as_their_settings():
    config = filled(arxiv={"source": "snapshot", "snapshot": "inputs/snap.jsonl.gz", "allow_fewer": "keep"})
    plan = plan_run(config, located_inputs)
    assert plan.own("fairness").snapshot == "/located/inputs/snap.jsonl.gz"
    fetch = json.loads(plan.settings("fairness", "arxiv_fetch"))  # its option dests (arxiv.api.* unprefixed)
    assert "allow_fewer" not in fetch and fetch["snapshot"] == "/located/inputs/snap.jsonl.gz"
    assert fetch["page_size"] == 200 and fetch["papers_per_group"] == 50 and "api" not in fetch
    assert json.loads(plan.settings("fairness", "arxiv_select")) == {
        "papers_per_group": 50, "seed": 0, "allow_fewer": "keep", "candidate_factor": 2.0, "categories_table": None,
        "groups": list(QUICKSTART["groups"])}
    assert plan.settings("fairness", "arxiv_fetch") == settings_json(fetch)  # canonical: same settings, same param


def test_api_source_reads_no_snapshot_even_when_one_is_named():
    config = filled(arxiv={"source": "api", "snapshot": "inputs/snap.jsonl.gz"})
    plan = plan_run(config, located_inputs)
    assert plan.own("fairness").snapshot is None
    assert json.loads(plan.settings("fairness", "arxiv_fetch"))["snapshot"] == "inputs/snap.jsonl.gz"


def test_fairness_stats_settings_name_models_groups_reference_and_ranks():
    inline = {"name": "my-rm", "path": "/models/my-rm", "rewardbench_rank": 4}
    plan = plan_run(filled(models=[SKYWORK, inline], reference_model=None), locate)
    stats = json.loads(plan.settings("fairness", "fairness_stats"))
    assert stats["models"] == [SKYWORK, "my-rm"] and stats["groups"] == list(QUICKSTART["groups"])
    assert stats["reference_model"] == "" and stats["ranks"]["my-rm"] == 4  # "" skips Table 4 with a note
    assert (stats["alpha"], stats["bootstrap"], stats["manifests"]) == (0.05, 2000, "results/data")


def test_plan_of_the_quickstart_config():
    config = filled()
    plan = plan_run(config, locate)
    assert list(plan.benchmarks) == ["fairness"]  # RewardMATH is off
    fairness = plan.benchmarks["fairness"]
    assert fairness.own.groups == tuple(QUICKSTART["groups"])
    assert list(fairness.models) == [SKYWORK] and plan.all_specs == fairness.models
    assert plan.lock_path is None and plan.locked_revisions == {} and fairness.own.arxiv_from_lock is None
    (jobs,) = plan.score_jobs
    assert jobs.stage.rule == "score_fairness" and jobs.models == (SKYWORK,)
    assert jobs.data(SKYWORK, "physics") == "results/data/physics.parquet"
    assert plan.score_rules == {"download_model", "score_fairness"}
    assert plan.scoring.threads == 4
    assert json.loads(plan.score_settings(jobs, SKYWORK)) == {"task": "fairness", "checkpoint_every": 500,
                                                              "max_batch_rows": 64}
    assert plan.config_sha256 == config_sha256(config)
    assert plan.model_keys == {SKYWORK: f"models[0] ({SKYWORK})"}
    assert plan.warnings == ()


def test_reference_model_outside_models_is_a_warning():
    plan = plan_run(filled(reference_model="Nemotron-4-340B-Reward"), locate)
    assert plan.warnings == ("config: reference_model 'Nemotron-4-340B-Reward' is not in `models`; "
                             "Table 4 (Pearson r) will be skipped",)


def test_rewardmath_models_may_name_inline_fairness_models():
    inline = {"name": "my-rm", "path": "/models/my-rm", "resources": {"gpu": 0}}
    config = filled(models=[SKYWORK, inline], rewardmath={"enabled": True, "models": ["my-rm", "math-shepherd-mistral-7b-prm"]})
    plan = plan_run(config, locate)
    assert list(plan.benchmarks["rewardmath"].models) == ["my-rm", "math-shepherd-mistral-7b-prm"]
    assert list(plan.all_specs) == [SKYWORK, "my-rm", "math-shepherd-mistral-7b-prm"]
    assert plan.model_keys["math-shepherd-mistral-7b-prm"] == "rewardmath.models[1] (math-shepherd-mistral-7b-prm)"
    assert plan.model_keys["my-rm"] == "models[1] (my-rm)"  # the first key naming it


def test_a_lock_pins_revisions_and_rebuilds_the_groups(tmp_path):
    lock = write_lock(tmp_path / "published.lock.yaml", "0123abc")
    config = filled(lock=str(lock), arxiv={"source": "lock", "snapshot": "inputs/snap.jsonl.gz"})
    plan = plan_run(config, locate, workdir=tmp_path)
    assert plan.lock_path == str(lock) and plan.all_specs[SKYWORK].revision == "0123abc"
    (jobs,) = plan.score_jobs
    assert json.loads(plan.score_settings(jobs, SKYWORK))["expect_revision"] == "0123abc"
    rebuild = plan.own("fairness").arxiv_from_lock
    assert rebuild is not None and rebuild.lock == str(lock) and len(rebuild.lock_sha256) == 64
    assert rebuild.snapshot == [str(REPO_ROOT / "inputs/snap.jsonl.gz")]
    settings = json.loads(plan.settings("fairness", "arxiv_from_lock"))
    assert settings["lock"] == str(lock) and json.loads(settings["groups_json"]) == config["groups"]
    assert json.loads(settings["config_json"])["snapshot"] == rebuild.snapshot[0]


@pytest.mark.parametrize(("changes", "message"), [
    ({"registry": "missing/models.yaml"}, f"model registry not found: {REPO_ROOT / 'missing/models.yaml'}"),
    ({"groups": {"physics": ["physics"], "more_physics": ["physics.optics"]}},
     "config: groups: a category may belong to one group only (physics.optics in physics and more_physics)"),
    ({"groups": {"physics": ["physics"], "nonsense": ["nonsense"]}},
     "config: groups.nonsense[0]: unknown arXiv category or archive 'nonsense'"),
    ({"models": ["Skywork-Reward-V2-Qwen3-0.6"]}, "config: models[0]: unknown model 'Skywork-Reward-V2-Qwen3-0.6'"),
    ({"models": [{"name": "m", "path": "/a"}], "rewardmath": {"enabled": True, "models": [{"name": "m", "path": "/b"}]}},
     "config: model 'm' is defined differently in `models` and `rewardmath.models`"),
    ({"lock": "results/lock.yaml"},
     "config: lock: results/lock.yaml is this run's own output; copy the lock elsewhere first"),
    ({"arxiv": {"source": "lock"}}, "config: arxiv.source is 'lock' but no top-level `lock:` file is given"),
    ({"lock": "nowhere.lock.yaml"}, "config: lock: lock file not found: "),
], ids=["registry", "overlapping-groups", "unknown-category", "unknown-model", "two-definitions", "own-lock",
        "lock-source-without-lock", "missing-lock"])
def test_problems_name_the_key(tmp_path, changes, message):
    config = copy.deepcopy(QUICKSTART)
    config.update(changes)
    check_config(config, SCHEMA)
    (tmp_path / "results").mkdir()
    write_lock(tmp_path / "results" / "lock.yaml", "0123abc")  # this run's own lock, from an earlier run
    with pytest.raises(RmevalError) as error:
        plan_run(config, lambda value: config_path(value, REPO_ROOT, workdir=tmp_path), workdir=tmp_path)
    assert str(error.value).startswith(message)


def test_model_keys_name_each_model_by_its_first_entry():
    keys = model_keys("rewardmath.models", ["a", {"name": "b", "path": "/b"}, "a"])
    assert keys == {"a": "rewardmath.models[0] (a)", "b": "rewardmath.models[1] (b)"}


def test_pending_outputs_are_the_files_whose_absence_runs_a_job():
    config = filled(rewardmath={"enabled": True, "models": ["math-shepherd-mistral-7b-prm"]})
    plan = plan_run(config, locate)
    groups = list(QUICKSTART["groups"])
    assert plan.pending_outputs({"arxiv_fetch"}, None) == [f"results/data/{g}.parquet" for g in groups]
    assert plan.pending_outputs({"score_fairness"}, SKYWORK) == [
        f"results/scores/fairness/{SKYWORK}/{g}.parquet" for g in groups]
    prm = "math-shepherd-mistral-7b-prm"
    tables = plan.own("rewardmath").scored_tables
    assert plan.pending_outputs({"rewardmath_prepare", "rewardmath_score"}, prm) == [
        "results/rewardmath/data/manifest.json", *(f"results/scores/rewardmath/{prm}/{t}.parquet" for t in tables)]
    assert plan.pending_outputs({"download_model"}, "not-a-model") == []


# ----------------------------------------------------------------------------- any subset of benchmarks runs alone
def test_rewardbench2_alone_scores_the_top_level_models_and_nothing_else():
    """`models` and `rewardbench2:` only: no groups, no fairness job; its model list defaults to `models`."""
    config = {"models": [SKYWORK, {"name": "inline-rm", "path": "org/inline-rm"}],
              "rewardbench2": {"enabled": True, "source": "local", "path": "rb2.jsonl"}}
    check_config(config, SCHEMA)
    assert config["fairness"] == {"enabled": None} and "groups" not in config
    plan = plan_run(config, locate)
    assert list(plan.benchmarks) == ["rewardbench2"]
    assert plan.score_files() == [f"results/scores/rewardbench2/{m}/rewardbench2.parquet" for m in (SKYWORK, "inline-rm")]
    assert plan.targets("rewardbench2")[:4] == ["results/tables/rewardbench2_scores.csv",
                                                "results/tables/rewardbench2_scores.md",
                                                "results/tables/rewardbench2_scores.tex",
                                                f"results/rewardbench2/official/{SKYWORK}.json"]
    settings = json.loads(plan.settings("rewardbench2", "rewardbench2_metrics"))
    assert (settings["bootstrap"], settings["seed"]) == (2000, 0)  # the run's stats.bootstrap / stats.seed


def test_fairness_is_on_with_groups_unless_turned_off():
    on = filled()
    assert "fairness" in plan_run(on, locate).benchmarks
    off = filled(fairness={"enabled": False})
    assert "fairness" not in plan_run(off, locate).benchmarks
    with pytest.raises(Exception, match=r"groups: missing; required when fairness\.enabled is True"):
        check_config({"models": [SKYWORK], "fairness": {"enabled": True}}, SCHEMA)


def test_a_benchmark_overrides_the_run_s_bootstrap_and_seed_visibly():
    config = filled(stats={"bootstrap": 500, "seed": 3}, arxiv={"seed": None},
                    rewardbench2={"enabled": True, "source": "local", "path": "rb2.jsonl", "bootstrap": 100})
    plan = plan_run(config, locate)
    metrics = json.loads(plan.settings("rewardbench2", "rewardbench2_metrics"))
    assert (metrics["bootstrap"], metrics["seed"]) == (100, 3)
    assert json.loads(plan.settings("fairness", "fairness_stats"))["bootstrap"] == 500
    assert json.loads(plan.settings("fairness", "arxiv_select"))["seed"] == 3  # arxiv.seed: null = the run's


def test_one_bootstrap_and_one_seed_default_across_all_schemas():
    """Every `bootstrap` / `seed` key of the merged schema either is the run's (stats.*) or defaults to null and
    names the run's key it falls back to."""
    from rmeval.config_check import RUN_DEFAULT_MARK

    found: dict[str, Any] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for name, child in (node.get("properties") or {}).items():
                if name in ("bootstrap", "seed") and isinstance(child, dict):
                    found[f"{path}{name}"] = child
                walk(child, f"{path}{name}.")
    walk(SCHEMA, "")
    assert {"stats.bootstrap", "stats.seed", "arxiv.seed", "corpus.seed",
            "rewardbench2.bootstrap", "rewardbench2.seed"} <= set(found)
    for key, node in found.items():
        if key.startswith("stats."):
            assert node["default"] is not None, key
        else:
            assert node["default"] is None and node[RUN_DEFAULT_MARK] == f"stats.{key.rsplit('.', 1)[1]}", key


@pytest.mark.parametrize("chosen", [("rewardmath",), ("rewardbench",), ("rewardbench2",), ("rewardmath", "rewardbench"),
                                    ("rewardmath", "rewardbench2"), ("rewardbench", "rewardbench2"),
                                    ("rewardmath", "rewardbench", "rewardbench2")])
def test_any_subset_of_benchmarks_plans_alone(chosen):
    sections = {"rewardmath": {"enabled": True, "models": [SKYWORK], "source": "local", "path": "rm.jsonl",
                               "rewardbench_source": "none"},
                "rewardbench": {"enabled": True, "source": "local", "path": "rb.jsonl"},
                "rewardbench2": {"enabled": True, "source": "local", "path": "rb2.jsonl"}}
    config = {"models": [SKYWORK], **{name: sections[name] for name in chosen}}
    check_config(config, SCHEMA)
    plan = plan_run(config, locate)
    assert tuple(plan.benchmarks) == chosen
    assert {jobs.stage.rule for jobs in plan.score_jobs} == {f"{name}_score" for name in chosen}
    assert all(path.startswith(tuple(f"results/scores/{name}/" for name in chosen)) for path in plan.score_files())


def test_a_baseline_plans_on_every_benchmark_with_nothing_to_fetch():
    """The registry's length baseline in `models` and every benchmark's list: scored by each benchmark's score
    stage like a model, its jobs ask for no GPU, and preflight finds nothing it lacks, even offline."""
    from rmeval.preflight import collect
    from rmeval.resources import scoring_resources

    config = filled(models=["length-baseline"], rewardmath={"enabled": True, "models": ["length-baseline"]},
                    rewardbench={"enabled": True, "models": ["length-baseline"]},
                    rewardbench2={"enabled": True, "models": ["length-baseline"]},
                    arxiv={"source": "snapshot", "snapshot": "inputs/snap.jsonl.gz"})
    plan = plan_run(config, locate)
    assert list(plan.benchmarks) == ["fairness", "rewardmath", "rewardbench", "rewardbench2"]
    for name in plan.benchmarks:
        assert list(plan.benchmarks[name].models) == ["length-baseline"], name
    assert {f.split("/")[2] for f in plan.score_files()} == {"fairness", "rewardmath", "rewardbench", "rewardbench2"}
    spec = plan.all_specs["length-baseline"]
    assert spec.path == "baseline:length" and scoring_resources(spec)["gpu"] == 0
    problems = collect(plan.preflight_plan(), env={"HF_HUB_OFFLINE": "1"}, probe=lambda *a: None,
                       in_cache=lambda repo, rev: False, dataset_cached=lambda name: True)
    assert not [p.line() for p in problems if "length-baseline" in p.line()]
    with_model = copy.deepcopy(config)  # the same offline check finds a hub model it lacks
    with_model["models"].append(SKYWORK)
    problems = collect(plan_run(with_model, locate).preflight_plan(), env={"HF_HUB_OFFLINE": "1"},
                       probe=lambda *a: None, in_cache=lambda repo, rev: False, dataset_cached=lambda name: True)
    assert any(SKYWORK in p.line() for p in problems) and not any("length-baseline" in p.line() for p in problems)


def test_a_section_s_models_are_its_own_or_the_run_s_and_a_direct_only_one_refuses_pairwise_judges(tmp_path):
    from rmeval.run_plan import PlanContext

    context = PlanContext(load_registry(str(REPO_ROOT / "config" / "models.yaml")), {}, str, tmp_path, None)
    judge = {"name": "pj", "path": "loopback/judge", "adapter": "judge", "resources": {"gpu": 0},
             "options": {"mode": "pairwise", "base_url": "http://127.0.0.1:1/v1"}}
    config: dict[str, Any] = {"models": ["length-baseline"], "bench": {"models": None}}
    specs, keys = context.section_models(config, "bench", "bench.models")
    assert list(specs) == ["length-baseline"] and keys == {"length-baseline": "models[0] (length-baseline)"}
    config["bench"]["models"] = [judge]
    specs, keys = context.section_models(config, "bench", "bench.models")  # a benchmark that takes judges
    assert specs["pj"].judge_mode == "pairwise" and keys == {"pj": "bench.models[0] (pj)"}
    with pytest.raises(RmevalError, match=r"config: bench.models: \['pj'\] are pairwise judges; it rates each "
                                          r"response on its own \(use `judge_mode: direct`\)"):
        context.section_models(config, "bench", "bench.models", direct_only="it rates each response on its own")
    config["bench"]["models"] = []
    with pytest.raises(RmevalError, match=r"config: bench.enabled is true but bench.models \(or the top-level "
                                          r"models\) is empty"):
        context.section_models(config, "bench", "bench.models")
