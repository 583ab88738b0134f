"""The RewardMATH plan (rmeval.benchmarks.rewardmath.plan): what rewardmath.smk runs, from `rewardmath:`."""

from __future__ import annotations

import pytest
from rmeval.benchmarks.rewardmath.plan import ALL_TABLES, RewardMathPlan
from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM, SUBJECT_SLUGS
from rmeval.config_check import config_schema, fill_defaults
from rmeval.errors import RmevalError
from rmeval.registry import ModelSpec


def _classifier(name: str) -> ModelSpec:
    return ModelSpec(name=name, path=f"org/{name}")


def _judge(name: str, mode: str, **options) -> ModelSpec:
    return ModelSpec(name=name, path="judge-model", adapter="judge", options={"mode": mode, **options})


SCHEMA = config_schema()


def _plan(section: dict, *specs: ModelSpec) -> RewardMathPlan:
    # The section as the Snakefile hands it over, the schema's defaults filled in; the resolver marks every path
    # it was asked to resolve, as common.smk's config_path would make it usable.
    config = {"rewardmath": dict(section)}
    fill_defaults(config, SCHEMA)
    return RewardMathPlan.from_config(config["rewardmath"], {spec.name: spec for spec in specs},
                                      lambda path: f"/abs/{path}")


def test_enabled_without_models_or_official_dir_names_both_keys():
    with pytest.raises(RmevalError, match=r"rewardmath\.models nor rewardmath\.official_dir"):
        _plan({"enabled": True, "official_rewardbench_dir": "rb"})


def test_pairwise_judge_at_recorded_positions_needs_pairwise_positions():
    section = {"enabled": True, "source": "local", "path": "rm.json"}
    with pytest.raises(RmevalError, match=r"\['judge-p'\].*rewardmath\.pairwise_positions is not set"):
        _plan(section, _judge("judge-p", "pairwise"), _judge("judge-seeded", "pairwise", positions="seeded"))


def test_a_disabled_section_plans_nothing_and_raises_nothing():
    plan = _plan({"enabled": False})
    assert not plan.enabled and plan.models == () and plan.exports == []
    assert "scores" not in plan.settings("config/models.yaml", 0.05)["rewardmath_metrics"]
    assert plan.subjects == SUBJECT_SLUGS and plan.scored_tables == (*SUBJECT_SLUGS, REWARDBENCH_STEM)


def test_official_files_alone_are_enough():
    plan = _plan({"enabled": True, "official_dir": "results dir", "problems": "p.jsonl"})
    assert plan.official == {"official": "/abs/results dir", "problems": "/abs/p.jsonl"}
    metrics = plan.settings("config/models.yaml", 0.05)["rewardmath_metrics"]
    assert metrics["official"] == "/abs/results dir" and metrics["problems"] == "/abs/p.jsonl"


def test_positions_default_to_hub_seeded_or_a_resolved_file():
    pairwise = _judge("judge-p", "pairwise", positions="seeded")
    hub = _plan({"enabled": True}, pairwise)
    assert hub.positions == "hf" and hub.position_file == {}
    seeded = _plan({"enabled": True, "source": "local", "path": "rm.json"}, pairwise)
    assert seeded.positions == "seeded" and seeded.position_file == {}
    recorded = _plan({"enabled": True, "pairwise_positions": "RewardMATH_pairwise.json"}, _judge("j", "pairwise"))
    assert recorded.positions == "/abs/RewardMATH_pairwise.json"
    assert recorded.position_file == {"positions": "/abs/RewardMATH_pairwise.json"}
    # No pairwise judge: nothing reads positions, so none are chosen for a local source.
    assert _plan({"enabled": True, "source": "local", "path": "x"}, _classifier("rm")).positions is None


def test_local_inputs_only_for_local_sources():
    section = {"enabled": True, "source": "local", "path": "rm.json", "rewardbench_source": "hf",
               "rewardbench_path": "ignored.jsonl"}
    plan = _plan(section, _classifier("rm"))
    assert plan.local_inputs == {"path": "/abs/rm.json"}
    assert plan.source == "local" and plan.rewardbench_source == "hf"


def test_subjects_and_rewardbench_decide_the_scored_tables():
    plan = _plan({"enabled": True, "subjects": ["algebra", "geometry"], "rewardbench_source": "none"},
                 _classifier("rm"))
    assert plan.subjects == ("algebra", "geometry") and plan.scored_tables == ("algebra", "geometry")
    assert ALL_TABLES == (*SUBJECT_SLUGS, REWARDBENCH_STEM)  # prepare writes every table regardless


def test_judges_are_exported_and_models_keep_the_config_order():
    plan = _plan({"enabled": True}, _classifier("rm-b"), _judge("judge-d", "direct"), _classifier("rm-a"),
                 _judge("judge-p", "pairwise", positions="seeded"))
    assert plan.models == ("rm-b", "judge-d", "rm-a", "judge-p")
    assert plan.judges == ("judge-d", "judge-p") and plan.pairwise == ("judge-p",)
    assert plan.exports == ["results/rewardmath/official/judge-d.json", "results/rewardmath/official/judge-p.json"]


def test_each_rule_gets_its_settings():
    plan = _plan({"enabled": True, "subjects": ["algebra"], "split": "test", "revision": None,
                  "rewardbench_split": "filtered", "rewardbench_revision": "a b", "source": "local",
                  "path": "my file.json"}, _classifier("rm"))
    settings = plan.settings("/repo/config/models.yaml", 0.01)
    assert settings["rewardmath_prepare"] == {"source": "local", "rewardbench_source": "hf", "path": "/abs/my file.json",
                                              "split": "test", "revision": None, "rewardbench_split": "filtered",
                                              "rewardbench_revision": "a b"}
    assert settings["rewardmath_metrics"]["scores"] == "results/scores/rewardmath"
    assert settings["rewardmath_metrics"]["models"] == ["rm"] and settings["rewardmath_metrics"]["subjects"] == ["algebra"]
    assert settings["rewardmath_metrics"]["registry"] == "/repo/config/models.yaml"
    assert settings["rewardmath_summary"] == {"prm_aggregation": "prod", "alpha": 0.01}  # the run's alpha
    assert settings["rewardmath_export"] == {"subjects": ["algebra"]}


def test_metric_settings_and_the_metrics_rule_files():
    plan = _plan({"enabled": True, "prm_aggregation": "min"}, _classifier("rm"))
    assert plan.prm_aggregation == "min"
    assert "bootstrap" not in plan.settings("r", 0.05)["rewardmath_metrics"]
    assert plan.table_files["side_by_side"] == "results/tables/rewardmath_vs_rewardbench.csv"
    assert plan.table_files["metrics_tex"] == "results/tables/rewardmath_metrics.tex"


def test_preflight_checks_a_local_file_as_prepare_reads_it(tmp_path):
    """Issue 36: preflight names what rewardmath-prepare would stop on in a local file, before the first job."""
    import json

    from rmeval.benchmarks.rewardmath.plan import needs

    bad = tmp_path / "rm.jsonl"
    bad.write_text(json.dumps({"problem": "1+1?", "answer": "2"}) + "\n")  # no solution fields
    good_missing = str(tmp_path / "absent.jsonl")
    section = {"source": "local", "rewardbench_source": "none"}
    checks = needs(section, {"path": str(bad), "rewardbench_path": good_missing}).checks
    problems = [check.run() for check in checks]
    assert problems[1] is None  # a missing file is the FileNeed's line, not a second one
    assert problems[0].key == "rewardmath.path" and str(bad) in problems[0].what


@pytest.mark.parametrize("key", ["bootstrap", "seed"])
def test_rewardmath_has_no_resampling_keys_that_would_do_nothing(key: str) -> None:
    """Issue 39: `rewardmath.bootstrap` / `.seed` were accepted and had no effect (its intervals are Wilson's): the
    schema now refuses them, naming the key, instead of letting a user believe they changed something."""
    from rmeval.config_check import config_problems, config_schema

    problems = config_problems({"rewardmath": {"enabled": False, key: 100}}, config_schema())
    assert any(problem.startswith(f"rewardmath.{key}: unknown key") for problem in problems), problems
