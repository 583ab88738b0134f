"""RMB through the real workflow (the `rmb` scenario of .test/): fixtures in the official RMB_dataset layout, a tiny
classifier and the length baseline, scored by the shared score rule; the tables are recomputed here from the score
files with a re-statement of the official rules (the length baseline's from the fixtures' texts alone), to the CSV's
last digit; multi-turn conversations reach the model as turns; bad input stops the run before its first job with
results/ untouched; a rerun does nothing."""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from scenarios import run_scenario
from workflow_helpers import run_snakemake

TARGETS = ("results/tables/rmb.csv", "results/tables/rmb.md", "results/tables/rmb.tex",
           "results/tables/rmb_scenarios.csv", "results/tables/comparisons.csv", "results/tables/leaderboard.csv",
           "results/summary.md", "results/lock.yaml")
MODELS = ("tiny-cls", "length-baseline")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _parse(value):
    return ast.literal_eval(value) if isinstance(value, str) else value


def official_cells(root: Path, reward_of) -> dict[str, float]:
    """The four cells and overall from the raw files: pairwise as eval/scripts/my_run_rm.py (l. 324 / 396:
    `1 if chosen > rejected else 0`; ACC = sum / len, l. 420), BoN as the paper defines it (Zhou et al. 2025,
    arXiv:2410.09893: the best response's reward above every loser's; no script in the repository)."""
    results: dict[str, list[int]] = {}
    for path in sorted(root.rglob("*.json")):
        kind, goal = path.relative_to(root).parts[:2]
        for row in json.loads(path.read_text()):
            turns = [{"role": t["role"], "content": t["content"]} for t in _parse(row["conversation_input"])]
            if kind == "Pairwise_set":
                won = reward_of(turns, _parse(row["chosen"])["answer"]) > reward_of(turns, _parse(row["reject"])["answer"])
                results.setdefault(f"{goal.lower()}_pairwise", []).append(1 if won else 0)
            else:
                best = reward_of(turns, _parse(row["bon_best"])["answer"])
                losers = [reward_of(turns, _parse(loser)["answer"]) for loser in _parse(row["loser_list"])]
                results.setdefault(f"{goal.lower()}_bon", []).append(1 if all(best > r for r in losers) else 0)
    cells = {name: 100 * (sum(values) / len(values)) for name, values in results.items()}
    order = ("helpfulness_bon", "helpfulness_pairwise", "harmlessness_bon", "harmlessness_pairwise")
    cells["overall"] = sum(cells[name] for name in order) / len(order)
    return cells


@pytest.fixture(scope="module")
def rmb_run(tmp_path_factory, tiny_models):
    return run_scenario("rmb", tmp_path_factory.mktemp("rmb"), None, tiny_models, *TARGETS)


@pytest.mark.e2e
def test_each_distinct_text_is_scored_once(rmb_run):
    results = rmb_run.workdir / "results"
    texts = pd.read_parquet(results / "rmb/data/texts.parquet")
    items = pd.read_parquet(results / "rmb/data/items.parquet")
    assert len(items) == 26 and len(texts) == 19  # responses shared by the two sets, a tied pair: one text each
    for model in MODELS:
        scores = pd.read_parquet(results / f"scores/rmb/{model}/texts.parquet")
        assert sorted(scores["id"]) == sorted(texts["id"])
    assert "rule rmb_score" in rmb_run.output
    manifest = json.loads((results / "rmb/data/manifest.json").read_text())
    assert manifest["items"] == {"pairwise": 6, "bon": 5} and len(manifest["files"]) == 6
    assert "rmb_data:" in (results / "lock.yaml").read_text()


@pytest.mark.e2e
def test_the_tables_are_the_official_rules_on_the_score_files(rmb_run):
    from rmeval.benchmarks.rmb.loading import text_id

    results = rmb_run.workdir / "results"
    table = {row["model"]: row for row in _rows(results / "tables/rmb.csv")}
    assert list(next(iter(table.values()))) == ["model", "helpfulness_bon", "helpfulness_pairwise",
                                                "harmlessness_bon", "harmlessness_pairwise", "overall"]
    for model in MODELS:
        rewards = pd.read_parquet(results / f"scores/rmb/{model}/texts.parquet").set_index("id")["reward"]
        expected = official_cells(rmb_run.workdir / "inputs/RMB_dataset",
                                  lambda turns, answer, rewards=rewards: rewards[text_id(tuple(turns), answer)])
        assert {name: table[model][name] for name in expected} == {n: f"{v:.12g}" for n, v in expected.items()}
    # the length baseline from the texts alone: a pair won when the chosen answer is longer, a best-of-N item when
    # the best is strictly longest (b103's best ties a loser: lost), whatever its score file says
    by_length = official_cells(rmb_run.workdir / "inputs/RMB_dataset", lambda turns, answer: len(answer))
    assert {n: table["length-baseline"][n] for n in by_length} == {n: f"{v:.12g}" for n, v in by_length.items()}
    assert by_length["helpfulness_pairwise"] == 25.0 and by_length["harmlessness_pairwise"] == 100.0
    modes = {row["model"]: row["mode"] for row in _rows(results / "tables/rmb_scenarios.csv")}
    assert modes == {"Random (chance)": "baseline", "tiny-cls": "classifier", "length-baseline": "length baseline"}
    assert "length baseline" in (results / "tables/rmb.md").read_text()
    assert "\\begin{tabular}" in (results / "tables/rmb.tex").read_text()
    summary = (results / "summary.md").read_text()
    assert "## RMB (Zhou et al. 2025)" in summary and "length-baseline (length baseline: a trivial baseline" in summary
    board = {row["model"]: row for row in _rows(results / "tables/leaderboard.csv") if row["benchmark"] == "rmb"}
    assert board["length-baseline"]["baseline"] == "True" and board["tiny-cls"]["baseline"] == "False"
    assert float(board["tiny-cls"]["value"]) == pytest.approx(float(table["tiny-cls"]["overall"]))
    compared = {row["metric"] for row in _rows(results / "tables/comparisons.csv") if row["benchmark"] == "rmb"}
    assert compared == {"helpfulness_bon", "helpfulness_pairwise", "harmlessness_bon", "harmlessness_pairwise",
                        "overall"}


@pytest.mark.e2e
def test_a_multi_turn_conversation_reaches_the_model_as_turns(rmb_run):
    """The 5-turn item's text was encoded from its turns through the chat template, not from its transcript as one
    user message: its token count in the score file is the conversation's."""
    from rmeval.conversation import Conversation, check_turns
    from rmeval.models.chat import RowEncoder, chat_template_renderer
    from transformers import AutoTokenizer

    results = rmb_run.workdir / "results"
    texts = pd.read_parquet(results / "rmb/data/texts.parquet")
    row = next(r for r in texts.to_dict("records") if len(json.loads(r["conversation"])) == 5)
    scores = pd.read_parquet(results / "scores/rmb/tiny-cls/texts.parquet").set_index("id")
    tokenizer = AutoTokenizer.from_pretrained(rmb_run.workdir / "inputs/models/tiny-cls")
    encoder = RowEncoder(tokenizer, chat_template_renderer(tokenizer, None, "tiny-cls"), max_length=256,
                         truncation="prompt-left", add_bos=None, model_name="tiny-cls")
    turns = Conversation(check_turns(json.loads(row["conversation"]), "test"))
    as_turns = len(encoder.encode(["x"], [turns], [row["response"]]).row(0))
    as_one_message = len(encoder.encode(["x"], [str(turns)], [row["response"]]).row(0))
    assert int(scores.loc[row["id"], "n_tokens"]) == as_turns != as_one_message


@pytest.mark.e2e
def test_bad_input_stops_before_the_first_job_and_a_rerun_does_nothing(rmb_run):
    workdir = rmb_run.workdir
    results = workdir / "results"
    before = {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in results.rglob("*") if path.is_file()}
    bad = workdir / "inputs/RMB_dataset/BoN_set/Harmlessness/S1.json"
    original, stat = bad.read_bytes(), bad.stat()
    rows = json.loads(original)
    rows[0]["loser_list"] = "[{'answer': 'x'"  # a literal that does not parse
    del rows[1]["bon_best"]  # a missing field
    bad.write_text(json.dumps(rows))
    try:
        failed = run_snakemake(workdir, rmb_run.configfile, "--cores", "2", *TARGETS, check=False)
    finally:
        bad.write_bytes(original)
        os.utime(bad, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    output = failed.stdout + failed.stderr
    assert failed.returncode != 0 and "before the first job" in output
    assert ("BoN_set/Harmlessness/S1.json: item 0 (bon_uid='b301'): field 'loser_list': not a Python literal"
            in output)
    assert "BoN_set/Harmlessness/S1.json: item 1 (bon_uid='b302'): missing field(s) ['bon_best']" in output
    after = {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in results.rglob("*") if path.is_file()}
    assert {p: h for p, h in after.items() if "perf" not in p.parts} == \
        {p: h for p, h in before.items() if "perf" not in p.parts}
    again = run_snakemake(workdir, rmb_run.configfile, "--cores", "2", *TARGETS)
    assert "Nothing to be done" in again.stdout + again.stderr
