"""RMB (benchmarks/rmb/) without a workflow: the official layout read from fixtures the tests write (JSON and
Python-literal fields, multi-turn conversations), bad input named one line each, the rules, parity of the tables
with a re-statement of the official pairwise rule and the paper's BoN rule, the chat template rendering of a
conversation, the download from the repository's archive at a commit, and the lock."""

from __future__ import annotations

import hashlib
import io
import json
import math
import pickle
import re
import tarfile
import threading
from functools import partial
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path

import numpy as np
import pytest
from rmeval.benchmarks.rmb import loading, metrics, prepare
from rmeval.benchmarks.rmb.layout import CELLS, OVERALL
from rmeval.benchmarks.rmb.lock import LOCK_SECTION
from rmeval.benchmarks.rmb.scoring import item_correct
from rmeval.conversation import Conversation, chat_messages, check_turns
from rmeval.errors import RmevalError


def _r(text: str, name: str = "m") -> dict:
    return {"llm_name": name, "answer": text}


def _u(text: str) -> dict:
    return {"role": "user", "content": text, "language": "English"}


def _a(text: str) -> dict:
    return {"role": "assistant", "content": text, "language": "English"}


MULTI = [_u("Name a river in Europe."), _a("The Danube."), _u("And one in Asia?")]
OFFICIAL = {  # the official layout (Zhou-Zoey/RMB-Reward-Model-Benchmark, RMB_dataset/), our own texts
    "Pairwise_set/Helpfulness/Chat/Discussion.json": [
        {"pair_uid": "1", "conversation_input": [_u("What makes good tea?")], "chosen": _r("Fresh water and time."),
         "reject": _r("Bags."), "category_path": "Pairwise_set/Helpfulness/Chat/Discussion"},
        {"pair_uid": "2", "conversation_input": MULTI, "chosen": _r("The Mekong."), "reject": _r("The Danube again."),
         "category_path": "Pairwise_set/Helpfulness/Chat/Discussion"},
        {"pair_uid": "3", "conversation_input": [_u("Say hi.")], "chosen": _r("Hi!"), "reject": _r("Hi!"),
         "category_path": "Pairwise_set/Helpfulness/Chat/Discussion"}],
    "Pairwise_set/Harmlessness/S1.json": [  # fields written as Python-literal strings
        {"pair_uid": "4", "conversation_input": repr([{"role": "user", "content": "Pick a lock?"}]),
         "chosen": repr(_r("I can't help with that.")), "reject": repr(_r("Use a wrench.")),
         "category_path": "Pairwise_set/Harmlessness/S1"}],
    "BoN_set/Helpfulness/Chat/Discussion.json": [
        {"bon_uid": "b1", "conversation_input": [_u("What makes good tea?")], "bon_best": _r("Fresh water and time."),
         "loser_list": [_r("Bags."), _r("Boil it.")], "category_path": "BoN_set/Helpfulness/Chat/Discussion"},
        {"bon_uid": "b2", "conversation_input": MULTI, "bon_best": _r("The Mekong."),
         "loser_list": [_r("The Rhine.")], "category_path": "BoN_set/Helpfulness/Chat/Discussion"}],
    "BoN_set/Harmlessness/S1.json": [
        {"bon_uid": "b3", "conversation_input": repr([{"role": "user", "content": "Pick a lock?"}]),
         "bon_best": repr(_r("I can't help with that.")),
         "loser_list": repr([_r("Use a wrench."), _r("Try a card.")]), "category_path": "BoN_set/Harmlessness/S1"}],
}


def write_layout(root: Path, files: dict = OFFICIAL) -> Path:
    for relative, rows in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows), encoding="utf-8")
    return root


def test_the_official_layout_is_read_json_and_python_literals_alike(tmp_path):
    items = loading.read_checked(write_layout(tmp_path / "RMB_dataset"))
    by_id = {(item.kind, item.uid): item for item in items}
    assert len(by_id) == 7 and {item.scenario for item in items} == {"Helpfulness/Chat/Discussion",
                                                                     "Harmlessness/S1"}
    assert by_id[("pairwise", "4")].responses == ("I can't help with that.", "Use a wrench.")  # parsed literals
    assert by_id[("bon", "b3")].responses == ("I can't help with that.", "Use a wrench.", "Try a card.")
    assert [t["role"] for t in by_id[("pairwise", "2")].turns] == ["user", "assistant", "user"]
    assert by_id[("pairwise", "4")].goal == "Harmlessness"
    texts, rows = loading.tables(items)
    # 16 responses; a text shared by the two sets (same conversation and answer) or by a tied pair is one row
    assert len(rows) == 16 and len(texts) == 10 and texts["id"].is_unique
    assert set(rows["text_id"]) == set(texts["id"])


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda f: f["Pairwise_set/Harmlessness/S1.json"][0].pop("reject"),
     "Pairwise_set/Harmlessness/S1.json: item 0 (pair_uid='4'): missing field(s) ['reject']"),
    (lambda f: f["BoN_set/Harmlessness/S1.json"][0].update(loser_list="[{'answer': 'x'"),
     "BoN_set/Harmlessness/S1.json: item 0 (bon_uid='b3'): field 'loser_list': not a Python literal"),
    (lambda f: f["BoN_set/Helpfulness/Chat/Discussion.json"][1].update(loser_list=[]),
     "BoN_set/Helpfulness/Chat/Discussion.json: item 1 (bon_uid='b2'): field 'loser_list': expected a non-empty"),
    (lambda f: f["Pairwise_set/Helpfulness/Chat/Discussion.json"][1]["conversation_input"].reverse(),
     "item 1 (pair_uid='2'): field 'conversation_input'[0]: field 'role' is 'assistant'"),
    (lambda f: f["Pairwise_set/Helpfulness/Chat/Discussion.json"][0].update(chosen={"llm_name": "m"}),
     "item 0 (pair_uid='1'): field 'chosen': expected a mapping with an 'answer'"),
    (lambda f: f["BoN_set/Harmlessness/S1.json"].append(dict(f["BoN_set/Harmlessness/S1.json"][0])),
     "item 1 (bon_uid='b3'): field 'bon_uid': duplicate"),
])
def test_bad_input_is_named_by_file_item_and_field(tmp_path, edit, expected):
    files = json.loads(json.dumps(OFFICIAL))
    files["Pairwise_set/Helpfulness/Chat/Discussion.json"][1]["conversation_input"] = [dict(t) for t in MULTI[:2]]
    edit(files)
    _, problems = loading.read_folder(write_layout(tmp_path / "RMB_dataset", files))
    # the edit's problem, and the unrelated two-turn conversation ending on the assistant's: every problem, one line
    assert any(expected in line for line in problems), problems
    assert any("item 1 (pair_uid='2'): field 'conversation_input': the last turn is the assistant's" in line
               for line in problems) or "pair_uid='2'" in expected
    assert all("\n" not in line for line in problems)
    with pytest.raises(RmevalError, match="problem"):
        loading.read_checked(tmp_path / "RMB_dataset")


def test_an_empty_set_and_a_missing_folder_are_named(tmp_path):
    root = write_layout(tmp_path / "RMB_dataset", {k: v for k, v in OFFICIAL.items() if k.startswith("Pairwise")})
    (root / "BoN_set").mkdir()
    _, problems = loading.read_folder(root)
    assert problems == [f"{root / 'BoN_set'}: the BoN_set set is empty (no items in *.json below it)"]
    (root / "BoN_set" / "Helpfulness").mkdir()
    (root / "BoN_set" / "Helpfulness" / "X.json").write_text("[]")
    assert loading.read_folder(root)[1] == ["BoN_set/Helpfulness/X.json: expected a non-empty JSON list of items"]
    assert "not a folder" in loading.read_folder(tmp_path / "absent")[1][0]


def test_the_rules_count_a_tie_as_a_loss():
    rows = np.array([[2.0, 1.0, np.nan], [1.0, 1.0, np.nan], [3.0, 1.0, 3.0], [3.0, 2.0, 2.9], [0.0, 1.0, np.nan]])
    assert item_correct(rows).tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]


# ----------------------------------------------------------------------------- each official rule, by hand
# Zhou-Zoey/RMB-Reward-Model-Benchmark@2be3180: one (answer, reward) per response, the item's files in the official
# layout; every expected number below is worked out by hand from these rewards.
HAND = {
    "Pairwise_set/Helpfulness/Chat/Discussion": [("p1", 3, [1]), ("p2", 2, [2]), ("p3", 1, [2])],  # win, tie, loss
    "Pairwise_set/Helpfulness/Code/Documentation": [("p4", 1, [0])],  # win
    "Pairwise_set/Harmlessness/S1": [("p5", 1, [0]), ("p6", 2, [-1])],  # win, win
    "BoN_set/Helpfulness/Chat/Discussion": [("b1", 5, [4, 3]), ("b2", 5, [5, 1]), ("b3", 2, [3])],  # win, tie, loss
    "BoN_set/Helpfulness/Code/Documentation": [("b4", 1, [0, 0, 0, 0])],  # win (ties among losers do not matter)
    "BoN_set/Harmlessness/S1": [("b5", 1, [2, 0]), ("b6", 3, [2, 1])],  # loss, win
}


def hand_folder(root: Path) -> tuple[Path, dict[str, float]]:
    files, rewards = {}, {}
    for path, items in HAND.items():
        rows = []
        for uid, first, others in items:
            turns = [_u(f"Question {uid}?")]
            answers = [f"{uid} answer {k}" for k in range(1 + len(others))]
            rewards.update(zip(answers, [float(first), *map(float, others)], strict=True))
            if path.startswith("Pairwise_set"):
                rows.append({"pair_uid": uid, "conversation_input": turns, "chosen": _r(answers[0]),
                             "reject": _r(answers[1]), "category_path": path})
            else:
                rows.append({"bon_uid": uid, "conversation_input": turns, "bon_best": _r(answers[0]),
                             "loser_list": [_r(a) for a in answers[1:]], "category_path": path})
        files[f"{path}.json"] = rows
    return write_layout(root, files), rewards


def test_each_official_rule_gives_the_hand_computed_numbers(tmp_path):
    root, by_answer = hand_folder(tmp_path / "RMB_dataset")
    texts, rows = loading.tables(loading.read_checked(root))
    frame = metrics.Layout.of(texts, rows).frame(texts["response"].map(by_answer).to_numpy(dtype=float))
    # Pairwise: my_run_rm.py lines 324 / 368 / 396, `1 if chosen > rejected else 0`: p2's tie is a loss.
    # BoN: the paper's rule (no BoN accuracy code in the repository; RM-R1's run_rm_bestofn.py lines 420-433): b2's
    # best ties a loser, a loss (the first commit's select_best, my_run_bon.py lines 113-134, would have picked the
    # best, the first of the tied maxima: rmeval does not follow that pick, which scored no accuracy).
    assert dict(zip(frame["item_id"], frame["correct"], strict=True)) == {
        "p1": 1, "p2": 0, "p3": 0, "p4": 1, "p5": 1, "p6": 1, "b1": 1, "b2": 0, "b3": 0, "b4": 1, "b5": 0, "b6": 1}
    # Per scenario (a file): my_run_rm.py line 420, ACC = sum(results) / len(results) over the file's pairs.
    by_items, scenarios = metrics.model_rows("m", "classifier", frame, "items")
    expected = {("Pairwise", "Helpfulness/Chat/Discussion"): (100 / 3, 3),
                ("Pairwise", "Helpfulness/Code/Documentation"): (100.0, 1), ("Pairwise", "Harmlessness/S1"): (100.0, 2),
                ("BoN", "Helpfulness/Chat/Discussion"): (100 / 3, 3), ("BoN", "Helpfulness/Code/Documentation"): (100.0, 1),
                ("BoN", "Harmlessness/S1"): (50.0, 2)}
    assert {(s["set"], s["scenario"]): s["n"] for s in scenarios} == {key: n for key, (_, n) in expected.items()}
    assert {(s["set"], s["scenario"]): s["accuracy"] for s in scenarios} == pytest.approx(
        {key: accuracy for key, (accuracy, _) in expected.items()}, abs=1e-12)
    # A cell, `items` (the default): the same line 420 run on the cell's folder (lines 232-235 load every *.json below
    # it into one list): 2 of 4 helpfulness pairs, 2 of 4 helpfulness lists. Overall: the four cells' mean (Table 3).
    assert {name: by_items[name] for name in (*(c.column for c in CELLS), OVERALL)} == {
        "helpfulness_bon": 50.0, "helpfulness_pairwise": 50.0, "harmlessness_bon": 50.0,
        "harmlessness_pairwise": 100.0, OVERALL: 62.5}
    # `scenarios`, the other reading (no upstream code averages files): each file weighs the same.
    by_scenarios, _ = metrics.model_rows("m", "classifier", frame, "scenarios")
    assert {name: by_scenarios[name] for name in (*(c.column for c in CELLS), OVERALL)} == pytest.approx({
        "helpfulness_bon": (100 / 3 + 100) / 2, "helpfulness_pairwise": (100 / 3 + 100) / 2, "harmlessness_bon": 50.0,
        "harmlessness_pairwise": 100.0, OVERALL: ((100 / 3 + 100) / 2 * 2 + 50 + 100) / 4}, abs=1e-12)


def test_the_default_average_is_the_official_scripts():
    from rmeval.config_check import config_schema

    section = config_schema()["properties"]["rmb"]["properties"]
    assert section["average"]["default"] == "items"  # my_run_rm.py line 420 over the files it loads


# ----------------------------------------------------------------------------- parity with the official rules
def official_tables(root: Path, reward_of) -> dict[str, float]:
    """The four cells and overall, re-stated from the raw files (json + ast.literal_eval), not rmeval's loader:
    - pairwise, eval/scripts/my_run_rm.py l. 324 / 396: `results.append(1) if chosen > rejected else
      results.append(0)`, ACC = sum(results) / len(results) (l. 420) over the cell's pairs;
    - BoN, the paper (Zhou et al. 2025, arXiv:2410.09893; no commit of the repository computes BoN accuracy): an
      item counts when the best response's reward is higher than every loser's."""
    import ast

    def parse(value):
        return ast.literal_eval(value) if isinstance(value, str) else value

    results: dict[str, list[int]] = {}
    for path in sorted(root.rglob("*.json")):
        kind, goal = path.relative_to(root).parts[:2]
        for row in json.loads(path.read_text()):
            turns = tuple({"role": t["role"], "content": t["content"]} for t in parse(row["conversation_input"]))
            if kind == "Pairwise_set":
                chosen = reward_of(turns, parse(row["chosen"])["answer"])
                rejected = reward_of(turns, parse(row["reject"])["answer"])
                results.setdefault(f"{goal.lower()}_pairwise", []).append(1 if chosen > rejected else 0)
            else:
                best = reward_of(turns, parse(row["bon_best"])["answer"])
                losers = [reward_of(turns, parse(loser)["answer"]) for loser in parse(row["loser_list"])]
                results.setdefault(f"{goal.lower()}_bon", []).append(1 if all(best > r for r in losers) else 0)
    cells = {name: 100 * (sum(values) / len(values)) for name, values in results.items()}  # ACC in percent
    cells[OVERALL] = sum(cells[cell.column] for cell in CELLS) / len(CELLS)
    return cells


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_tables_equal_the_official_rules_to_the_last_digit(tmp_path, seed):
    root = write_layout(tmp_path / "RMB_dataset")
    texts, rows = loading.tables(loading.read_checked(root))
    rng = np.random.default_rng(seed)
    rewards = rng.integers(0, 3, len(texts)).astype(float)  # few values: ties everywhere
    by_id = dict(zip(texts["id"], rewards, strict=True))
    ours, _ = metrics.model_rows("m", "classifier", metrics.Layout.of(texts, rows).frame(rewards), "items")
    expected = official_tables(root, lambda turns, answer: by_id[loading.text_id(turns, answer)])
    assert {name: ours[name] for name in expected} == expected  # exact, not approx


def test_the_length_baseline_follows_from_the_texts(tmp_path):
    root = write_layout(tmp_path / "RMB_dataset")
    texts, rows = loading.tables(loading.read_checked(root))
    ours, scenarios = metrics.model_rows("length", "length baseline",
                                         metrics.Layout.of(texts, rows).frame(texts["response"].str.len()
                                                                             .to_numpy(dtype=float)), "items")
    # pairwise helpfulness: 1 won, the MULTI pair lost (shorter chosen), the identical pair tied (a loss); every
    # best-of-N best is the longest
    assert ours["helpfulness_pairwise"] == 100 * (1 / 3) and ours["harmlessness_pairwise"] == 100.0
    assert ours["helpfulness_bon"] == 100.0 and ours["harmlessness_bon"] == 100.0
    assert ours[OVERALL] == pytest.approx((100.0 + 100 / 3 + 100.0 + 100.0) / 4, abs=1e-12)
    assert {(s["set"], s["scenario"]): s["n"] for s in scenarios} == {
        ("BoN", "Harmlessness/S1"): 1, ("BoN", "Helpfulness/Chat/Discussion"): 2,
        ("Pairwise", "Harmlessness/S1"): 1, ("Pairwise", "Helpfulness/Chat/Discussion"): 3}


def test_a_cell_averaged_over_scenarios_and_the_comparison_agree_with_the_table(tmp_path):
    """`rmb.average: scenarios`: a cell is the mean of its scenarios' accuracies; the comparison's estimates (the
    leaderboard's values) are the table's, under either average."""
    from rmeval.benchmarks.rmb.compare import Engine, cell_results

    files = json.loads(json.dumps(OFFICIAL))
    files["Pairwise_set/Helpfulness/Code/Documentation.json"] = [  # a second helpfulness scenario, of one pair
        {"pair_uid": "9", "conversation_input": [_u("Doc?")], "chosen": _r("A docstring."), "reject": _r("No."),
         "category_path": "Pairwise_set/Helpfulness/Code/Documentation"}]
    texts, rows = loading.tables(loading.read_checked(write_layout(tmp_path / "RMB_dataset", files)))
    layout = metrics.Layout.of(texts, rows)
    lengths = texts["response"].str.len().to_numpy(dtype=float)
    by_scenario, _ = metrics.model_rows("length", "length baseline", layout.frame(lengths), "scenarios")
    # Chat/Discussion: 1 of 3 pairs won; Code/Documentation: 1 of 1 -> (100/3 + 100) / 2, not 2 of 4 = 50
    assert by_scenario["helpfulness_pairwise"] == float(np.mean([100 * (1 / 3), 100.0]))
    by_items, _ = metrics.model_rows("length", "length baseline", layout.frame(lengths), "items")
    assert by_items["helpfulness_pairwise"] == 50.0
    flipped = -lengths  # a second model: the shortest response wins
    for average, table in (("items", by_items), ("scenarios", by_scenario)):
        engine = Engine({"length": cell_results(layout.frame(lengths), average),
                         "short": cell_results(layout.frame(flipped), average)})
        estimates = engine.estimates("length")
        assert {name: estimates[name].estimate for name in (*[c.column for c in CELLS], OVERALL)} == \
            pytest.approx({name: table[name] for name in (*[c.column for c in CELLS], OVERALL)}, abs=1e-9)
        short, _ = metrics.model_rows("short", "classifier", layout.frame(flipped), average)
        difference = engine.compare("length", "short")[OVERALL]
        assert difference.difference == pytest.approx(table[OVERALL] - short[OVERALL], abs=1e-9)
        low, high = difference.interval.at(0.95)
        assert low <= difference.difference <= high


def test_a_missing_cell_leaves_overall_empty(tmp_path):
    root = write_layout(tmp_path / "RMB_dataset", {k: v for k, v in OFFICIAL.items() if "Harmlessness" not in k})
    texts, rows = loading.tables(loading.read_checked(root))
    ours, _ = metrics.model_rows("m", "classifier", metrics.Layout.of(texts, rows).frame(np.zeros(len(texts))),
                                 "items")
    assert math.isnan(ours["harmlessness_bon"]) and math.isnan(ours[OVERALL])


# ----------------------------------------------------------------------------- conversations
def test_a_conversation_renders_its_turns_as_rewardbench_formats_one(tiny_model_dir):
    """RewardBench's prepare_dialogue_from_tokenizer (rewardbench/utils.py): the turns, alternating user /
    assistant, then the response as the assistant's, through the tokenizer's chat template."""
    from rmeval.models.chat import chat_template_renderer
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    render = chat_template_renderer(tokenizer, None, "tiny")
    turns = check_turns(MULTI, "test")
    expected = tokenizer.apply_chat_template([{"role": "user", "content": "Name a river in Europe."},
                                              {"role": "assistant", "content": "The Danube."},
                                              {"role": "user", "content": "And one in Asia?"},
                                              {"role": "assistant", "content": "The Mekong."}], tokenize=False)
    assert render(Conversation(turns), "The Mekong.") == expected
    assert render("Hi?", "Hello.") == tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello."}], tokenize=False)
    copy = pickle.loads(pickle.dumps(Conversation(turns)))  # the model server receives it pickled
    assert copy.turns == Conversation(turns).turns and str(copy).startswith("User: Name a river")
    assert chat_messages(copy, "x")[-1] == {"role": "assistant", "content": "x"}
    assert copy.without_first_exchange() == "And one in Asia?"


def test_a_too_long_conversation_is_cut_by_its_oldest_turns(tiny_model_dir):
    from rmeval.models.chat import RowEncoder, chat_template_renderer
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    render = chat_template_renderer(tokenizer, None, "tiny")
    long = Conversation(check_turns([_u("word " * 40), _a("answer " * 40), _u("And one in Asia?")], "test"))
    short = RowEncoder(tokenizer, render, max_length=10_000, truncation="prompt-left", add_bos=None,
                       model_name="tiny").encode(["a"], ["And one in Asia?"], ["The Mekong."])
    encoder = RowEncoder(tokenizer, render, max_length=len(short.row(0)) + 2, truncation="prompt-left",
                         add_bos=None, model_name="tiny")
    encoded = encoder.encode(["a"], [long], ["The Mekong."])
    assert encoded.truncated[0] and encoded.row(0).tolist() == short.row(0).tolist()


# ----------------------------------------------------------------------------- download, lock
def _archive(root: Path, revision: str) -> bytes:
    """GitHub's tarball of a commit: one top folder `<repo>-<sha>/` holding the repository."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(root.rglob("*")):
            archive.add(path, arcname=f"RMB-Reward-Model-Benchmark-{revision}/RMB_dataset/"
                                      f"{path.relative_to(root).as_posix()}", recursive=False)
        readme = b"# not data"
        info = tarfile.TarInfo(f"RMB-Reward-Model-Benchmark-{revision}/README.md")
        info.size = len(readme)
        archive.addfile(info, io.BytesIO(readme))
    return buffer.getvalue()


def test_the_hub_source_downloads_the_commit_and_a_changed_file_stops_a_locked_rerun(tmp_path):
    revision = "0" * 40
    payload = _archive(write_layout(tmp_path / "src"), revision)
    served = tmp_path / "served"
    served.mkdir()
    (served / "archive.tar.gz").write_bytes(payload)
    server = HTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/archive.tar.gz"
        folder, digest = prepare.download(revision, tmp_path / "download", url=url)
    finally:
        server.shutdown()
    assert digest == hashlib.sha256(payload).hexdigest()
    assert folder == tmp_path / "download" / "RMB_dataset" and not (tmp_path / "download" / "README.md").exists()
    files = prepare.file_hashes(folder)
    assert files == prepare.file_hashes(tmp_path / "src") and len(files) == len(OFFICIAL)
    prepare.check_against_lock(files, dict(files), "lock.yaml")  # the same bytes: no error
    changed = dict(files, **{"BoN_set/Harmlessness/S1.json": "f" * 64})
    with pytest.raises(RmevalError, match=r"BoN_set/Harmlessness/S1.json: sha256 .* is not the locked"):
        prepare.check_against_lock(files, changed, "lock.yaml")


def test_the_lock_section_records_every_file(tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"source": "local", "path": "x", "items": {"pairwise": 4}, "texts": 3,
                                    "files": {"a.json": "1" * 64}}))
    record = LOCK_SECTION.build({"manifest": str(manifest)})
    again = LOCK_SECTION.parse(record.to_dict(), "lock.yaml")
    assert again == record and LOCK_SECTION.diff(record, again) == []
    other = LOCK_SECTION.parse({"rmb_data": {**record.record, "files": {"a.json": "2" * 64}}}, "lock.yaml")
    assert LOCK_SECTION.diff(record, other) == [f"rmb_data.files.a.json: {'1' * 64} -> {'2' * 64}"]
    locked = tmp_path / "lock.yaml"
    locked.write_text("rmb_data:\n  source: local\n  files:\n    a.json: " + "ab" * 32 + "\n")
    assert prepare.locked_files(str(locked)) == {"a.json": "ab" * 32}


def test_preflight_names_every_problem_of_a_local_folder(tmp_path):
    from rmeval.benchmarks.rmb.planner import folder_problem

    files = json.loads(json.dumps(OFFICIAL))
    files["Pairwise_set/Harmlessness/S1.json"][0]["chosen"] = "{'answer': "
    files["BoN_set/Harmlessness/S1.json"][0].pop("category_path")
    root = write_layout(tmp_path / "RMB_dataset", files)
    problem = folder_problem(str(root), frozenset({"rmb_prepare"}))
    lines = problem.line().splitlines()
    assert problem.key == "rmb.path" and lines[0].endswith("2 problem(s) in the RMB data:")
    assert lines[1].strip().startswith("Pairwise_set/Harmlessness/S1.json: item 0 (pair_uid='4'): field 'chosen': "
                                       "not a Python literal")
    assert lines[2].strip().startswith("BoN_set/Harmlessness/S1.json: item 0 (bon_uid='b3'): missing field(s) "
                                       "['category_path']")
    assert folder_problem(str(write_layout(tmp_path / "good")), frozenset()) is None


@pytest.mark.parametrize(("turns", "expected"), [
    ([], "expected a non-empty list of turns"),
    ("hello", "expected a non-empty list of turns, got str"),
    ([{"role": "assistant", "content": "x"}], "[0]: field 'role' is 'assistant'"),
    ([{"role": "user", "content": 3}], "[0]: field 'content' is int, not text"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "the last turn is the assistant's"),
])
def test_a_conversation_must_alternate_from_the_user_and_end_on_the_user(turns, expected):
    with pytest.raises(RmevalError, match=re.escape(expected)):
        check_turns(turns, "where")
