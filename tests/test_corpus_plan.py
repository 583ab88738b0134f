"""The fairness plan with `corpus:` (rmeval.benchmarks.fairness.planner): rule corpus_prepare instead of arXiv's,
the paired tables asked of fairness_stats only for a paired corpus, the schema's if/else on `corpus`; a config
without `corpus:` is filled and planned exactly as before."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from rmeval.config_check import ConfigError, check_config, config_schema
from rmeval.io.paths import config_path
from rmeval.run_plan import plan_run
from workflow_helpers import REPO_ROOT

SCHEMA = config_schema()
EXAMPLE = yaml.safe_load((REPO_ROOT / "config" / "examples" / "own_groups.yaml").read_text())
QUICKSTART = yaml.safe_load((REPO_ROOT / "config" / "quickstart.yaml").read_text())


def locate(value: str) -> str:
    return config_path(value, REPO_ROOT)


def checked(config: dict) -> dict:
    config = copy.deepcopy(config)
    check_config(config, SCHEMA)
    return config


def test_corpus_plan_prepares_the_corpus_and_no_arxiv_rule():
    plan = plan_run(checked(EXAMPLE), locate)
    fairness = plan.benchmarks["fairness"]
    assert "corpus_prepare" in fairness.settings and not any(rule.startswith("arxiv") for rule in fairness.settings)
    prepare = json.loads(plan.settings("fairness", "corpus_prepare"))
    corpus = json.loads(prepare["corpus_json"])
    assert corpus["path"] == locate("config/examples/own_groups_corpus.jsonl")  # located as the run reads it
    assert json.loads(prepare["groups_json"]) == EXAMPLE["groups"] and prepare["out_dir"] == "results/data"
    stats = json.loads(plan.settings("fairness", "fairness_stats"))
    assert stats["corpus"] is True and stats["pairs"] == "results/data"
    assert json.loads(plan.settings("fairness", "fairness_figures"))["paired"] is True
    assert plan.own("fairness").corpus.paired and plan.own("fairness").corpus.inputs == [corpus["path"]]


def test_unpaired_corpus_asks_no_paired_tables():
    config = checked(EXAMPLE)
    del config["corpus"]["columns"]["pair"]
    stats = json.loads(plan_run(config, locate).settings("fairness", "fairness_stats"))
    assert "pairs" not in stats and stats["corpus"] is True


def test_without_corpus_the_config_and_plan_are_as_before():
    config = checked(QUICKSTART)
    assert "corpus" not in config  # no default: the config hash (the lock's config_sha256) is unchanged
    fairness = plan_run(config, locate).benchmarks["fairness"]
    assert {"arxiv_fetch", "arxiv_select"} <= set(fairness.settings) and "corpus_prepare" not in fairness.settings
    stats = json.loads(plan_run(config, locate).settings("fairness", "fairness_stats"))
    assert "corpus" not in stats and "pairs" not in stats
    assert "paired" not in json.loads(plan_run(config, locate).settings("fairness", "fairness_figures"))


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c.pop("arxiv"), "arxiv: missing; required"),
    (lambda c: c["groups"].__setitem__("x", ["Not A Category"]), "groups.x[0]: got 'Not A Category'"),
])
def test_arxiv_runs_keep_their_checks(change, message):
    config = copy.deepcopy(QUICKSTART)
    change(config)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_config(config, SCHEMA)


def test_corpus_groups_take_any_label_and_need_a_prompt():
    config = copy.deepcopy(EXAMPLE)
    config["groups"]["formal"] = ["Register: Formal (en-GB)"]
    checked(config)
    del config["corpus"]["columns"]["prompt"]
    with pytest.raises(ConfigError, match="prompt_template"):
        check_config(config, SCHEMA)
    config["corpus"]["prompt_template"] = "Answer: {question}"
    checked(config)


def test_preflight_needs_name_the_corpus_key():
    needs = plan_run(checked(EXAMPLE), locate).benchmarks["fairness"].needs
    assert [(need.key, need.path) for need in needs.files] == [
        ("corpus.path", locate("config/examples/own_groups_corpus.jsonl"))]
    config = checked(EXAMPLE)
    config["corpus"] = {**config["corpus"], "source": "hf", "hf": {"name": "your-org/your-corpus"}}
    checked(config)
    needs = plan_run(checked(config), locate).benchmarks["fairness"].needs
    assert [(need.key, need.dataset) for need in needs.datasets] == [("corpus.hf.name", "your-org/your-corpus")]
