"""The `judge` adapter against a loopback chat-completions server (tests/judge_server.py): ratings and verdicts in
several phrasings, unparsable replies, a 429 with Retry-After, a 500 then success, a reply slower than the timeout;
the cache proven by a rerun that sends no request; the key in no log, output or cache file; and RewardMATH
accuracy / MRR of both judge modes equal to a hand computation from what the server meant, ties and nulls included.
The data is the real RewardMATH sample (2 problems x 10 solutions) with the chosen positions the official
RewardMATH_pairwise.json records for it."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
from judge_server import JUDGE_MODEL, JudgeServer
from rmeval.cli import main as rmeval
from rmeval.models.judge import default_prompt_file, load_prompt, numbered_list, parse_rating, parse_verdict

SECRET = "sk-judge-TEST-3f9a2c7e0b-DO-NOT-LEAK"
KEY_ENV = "RMEVAL_TEST_JUDGE_KEY"


@pytest.mark.parametrize("text, expected", [
    ("Good.\n\n[[8]]", 8), ("Rating: [[7]]", 7), ("Rating: 6", 6), ("Score: 9/10", 9), ("[[ 4 ]]", 4),
    ("**Rating:** [[10]]", 10), ("I rate it [[7.5]] overall", 7.5), ("[[8/10]]", 8), ("[RESULT] 3", 3),
    ("Rating: [[3]] ... on reflection, Rating: [[5]]", 5), ("Grade: 2", 2),
    ("no rating here", None), ("Rating: [[11]]", None), ("[[0]]", None), ("", None), (None, None),
])
def test_parse_rating(text, expected):
    assert parse_rating(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("[[A]]", "A"), ("Judgement: [[B]]", "B"), ("Judgment: A", "A"), ("Final verdict: **B**", "B"),
    ("[[Assistant A]]", "A"), ("[[ b ]]", "B"), ("The better answer is B.", "B"), ("[RESULT] A", "A"),
    ("Verdict: (A)", "A"), ("First [[A]], but on reflection [[B]]", "B"),
    # The official parser takes the first A/B letter after "Judgement:": "Assistant" would give 'A'. Not here.
    ("Judgement: Assistant B", "B"), ("Both are fine. [[C]]", None), ("Assistant A and Assistant B", None),
    ("", None), (None, None),
])
def test_parse_verdict(text, expected):
    assert parse_verdict(text) == expected


def test_default_prompts_have_the_official_layout():
    direct = load_prompt(default_prompt_file(), "rmeval_direct", "direct")
    pairwise = load_prompt(default_prompt_file(), "rmeval_pairwise", "pairwise")
    messages = pairwise.render({"problem": "1+1?", "eval_solution_A": "2", "eval_solution_B": "3"})
    assert [m["role"] for m in messages] == ["system", "user"] and "1+1?" in messages[1]["content"]
    assert direct.sha256 != pairwise.sha256 and len(direct.sha256) == 64
    assert numbered_list(["a", "b"]) == "1. a\n2. b"


# ------------------------------------------------------------------------------------------ RewardMATH runs
@pytest.fixture(scope="module")
def sample_tables(shared_data, tmp_path_factory) -> Path:
    """The RewardMATH sample, prepared, with the official recorded chosen positions joined in."""
    root = tmp_path_factory.mktemp("judge-data")
    sample = shared_data / "rewardmath" / "benchmark_samples"
    assert rmeval(["rewardmath-prepare", "--source", "local", "--path", str(sample / "RewardMATH_direct.json"),
                   "--out", str(root / "data")]) == 0
    assert rmeval(["rewardmath-positions", "--data", str(root / "data"), "--positions",
                   str(sample / "RewardMATH_pairwise.json"), "--tables", "algebra", "--out", str(root / "pairwise")]) == 0
    return root


def _spec(name: str, server: JudgeServer, cache: Path, mode: str, **options) -> str:
    return json.dumps({
        "name": name, "path": JUDGE_MODEL, "adapter": "judge", "max_length": 8192,
        "options": {"mode": mode, "base_url": server.base_url, "api_key_env": KEY_ENV, "max_concurrency": 3,
                    "timeout_s": 0.8, "backoff_s": 0.05, "max_retries": 4, "cache_dir": str(cache), **options},
    })


def _score(spec: str, data: Path, output: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, KEY_ENV: SECRET}
    return subprocess.run(
        [sys.executable, "-m", "rmeval", "score", "--spec", spec, "--task", "pairs", "--input", str(data),
         "--output", str(output), "--progress-every", "0", "--checkpoint-every", "4"],
        capture_output=True, text=True, check=False, env=env,
    )


def _score_here(spec: str, data: Path, output: Path) -> subprocess.CompletedProcess:
    """`_score` through the same CLI in this process: what a fresh interpreter adds (the key read from the environment
    at start, a killed process) is the subprocess tests' business; here it would cost a second an interpreter."""
    args = ["score", "--spec", spec, "--task", "pairs", "--input", str(data), "--output", str(output),
            "--progress-every", "0", "--checkpoint-every", "4"]
    stdout, stderr = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, {KEY_ENV: SECRET}), redirect_stdout(stdout), redirect_stderr(stderr):
        code = rmeval(args)
    return subprocess.CompletedProcess(args, code, stdout.getvalue(), stderr.getvalue())


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else value


def _hand_metrics(per_problem: list[tuple[float, list[float]]]) -> tuple[float, float]:
    """Accuracy (chosen strictly above every rejected) and MRR (ties rank above the chosen), in percent."""
    correct = [all(chosen > r for r in rejected) for chosen, rejected in per_problem]
    mrr = [1 / (1 + sum(r >= chosen for r in rejected)) for chosen, rejected in per_problem]
    return round(100 * sum(correct) / len(correct), 2), round(100 * sum(mrr) / len(mrr), 2)


@pytest.mark.slow(reason="a real wait: a slow reply and two retried faults, in an `rmeval score` subprocess")
def test_direct_judge_retries_caches_and_matches_a_hand_computation(sample_tables: Path, tmp_path: Path) -> None:
    data = sample_tables / "data" / "algebra.parquet"
    scores = tmp_path / "scores"
    output = scores / "judge-direct" / "algebra.parquet"
    cache = tmp_path / "cache"
    with JudgeServer() as server:
        server.fault_plan = ["429", "500", "slow"]
        first = _score(_spec("judge-direct", server, cache, "direct"), data, output)
        assert first.returncode == 0, first.stderr
        assert dict(server.faults_served) == {"429": 1, "500": 1, "slow": 1}
        assert "HTTP 429" in first.stderr and "HTTP 500" in first.stderr and "Timeout" in first.stderr
        assert server.max_in_flight <= 3 and server.authorizations == {f"Bearer {SECRET}"}
        requests = server.requests
        assert requests == 20 + 3  # one per solution, plus one retry per fault
        body = server.bodies[-1]
        assert body["temperature"] == 0.0 and body["max_tokens"] == 2048 and "n" not in body

        table = pd.read_parquet(output)
        prepared = pd.read_parquet(data)
        assert table["id"].tolist() == prepared["id"].tolist()
        # Each row's rating is what the server meant by its reply; a null reply scores the lowest rating, 1.
        by_user = {body["messages"][-1]["content"]: body for body in server.bodies}
        meant = {}
        for row in prepared.to_dict("records"):
            users = [u for u in by_user if numbered_list(list(row["steps"])) in u and row["prompt"] in u]
            assert len(users) == 1, row["id"]
            meant[row["id"]] = server.intended[users[0]][0]
        got = dict(zip(table["id"], table["rating"], strict=True))
        assert {k: (None if pd.isna(v) else v) for k, v in got.items()} == {
            k: (None if v is None else float(v)) for k, v in meant.items()}
        nulls = sum(v is None for v in meant.values())
        assert 0 < nulls < 20, "the sample must exercise both parsed and unparsable replies"
        assert (table.loc[table["rating"].isna(), "reward"] == 1.0).all()
        assert table["replies"].map(len).eq(1).all()

        meta = json.loads(output.with_name("algebra.meta.json").read_text())
        details = meta["adapter_details"]
        assert details["mode"] == "direct" and details["n_null"] == nulls and details["n_judged"] == 20
        assert details["prompt_sha256"] == load_prompt(default_prompt_file(), "rmeval_direct", "direct").sha256
        assert details["usage"]["prompt_tokens"] > 0 and details["usage"]["completion_tokens"] == 7 * 20
        assert details["retries"] == 3 and meta["tokens"] == int(table["n_tokens"].sum()) > 0

        # A rerun sends no request at all: every reply comes from the cache, the output is identical.
        output.unlink()
        second = _score(_spec("judge-direct", server, cache, "direct"), data, output)
        assert second.returncode == 0, second.stderr
        assert server.requests == requests
        pd.testing.assert_frame_equal(pd.read_parquet(output), table)
        assert json.loads(output.with_name("algebra.meta.json").read_text())["adapter_details"]["cache_hits"] == 20

    for text in (first.stdout, first.stderr, second.stdout, second.stderr):
        assert SECRET not in text
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert len(list(cache.rglob("*.json"))) == 20

    # Metrics equal the hand computation from the server's intentions (nulls = 1, ties against the chosen).
    values = {k: (1.0 if v is None else float(v)) for k, v in meant.items()}
    per_problem = []
    for _, problem in prepared.groupby("problem_id"):
        chosen = problem.loc[problem["solution_type"] == "chosen", "id"].item()
        per_problem.append((values[chosen], [values[i] for i in problem["id"] if i != chosen]))
    out = tmp_path / "tables"
    assert rmeval(["rewardmath-metrics", "--scores", str(scores), "--data", str(sample_tables / "data"),
                   "--subjects", "algebra", "--out", str(out)]) == 0
    (row,) = [r for r in _csv(out / "rewardmath_metrics.csv") if r["source"] != "baseline"]
    assert (row["setup"], row["kind"], row["aggregation"]) == ("judge-direct", "LLM judge", "scalar")
    assert (float(row["accuracy"]), float(row["mrr"])) == _hand_metrics(per_problem)
    assert _csv(out / "rewardmath_metrics_ci.csv")[0]["n_missing_verdicts"] == str(nulls)

    # The official result-file layout, read back by rewardmath-metrics --official, gives the same numbers.
    exported = tmp_path / "official" / "judge-direct.json"
    assert rmeval(["rewardmath-export", "--model", "judge-direct", "--scores", str(scores), "--data",
                   str(sample_tables / "data"), "--subjects", "algebra", "--out", str(exported)]) == 0
    rows = json.loads(exported.read_text())
    assert len(rows) == 2 and rows[0]["solution_reference"][0] == "human_to_GPT-4" and len(rows[0]["score"]) == 10
    again = tmp_path / "again"
    assert rmeval(["rewardmath-metrics", "--official", str(exported.parent), "--out", str(again)]) == 0
    (official,) = _csv(again / "rewardmath_metrics.csv")
    assert (official["accuracy"], official["mrr"]) == (row["accuracy"], row["mrr"])


def test_pairwise_judge_in_both_orders_matches_a_hand_computation(sample_tables: Path, tmp_path: Path) -> None:
    data = sample_tables / "pairwise" / "algebra.parquet"
    prepared = pd.read_parquet(data)
    recorded = prepared.dropna(subset=["chosen_position"])
    assert len(recorded) == 18 and set(recorded["chosen_position"]) == {"A", "B"}
    scores = tmp_path / "scores"
    output = scores / "judge-pair" / "algebra.parquet"
    with JudgeServer() as server:
        spec = _spec("judge-pair", server, tmp_path / "cache", "pairwise", both_orders=True, n=3, temperature=0.7)
        result = _score_here(spec, data, output)
        assert result.returncode == 0, result.stderr
        assert server.requests == 18 * 2, "two orders for each of the nine rejected solutions of two problems"
        assert all(body["n"] == 3 and body["temperature"] == 0.7 for body in server.bodies)
        table = pd.read_parquet(output)

        # Hand computation: majority of the three samples per order (a tie or no parse is null).
        def majority(meanings: list[object]) -> str | None:
            votes = [m for m in meanings if m is not None]
            counts = {v: votes.count(v) for v in set(votes)}
            best = sorted(counts.items(), key=lambda kv: -kv[1])
            return None if not best or (len(best) > 1 and best[0][1] == best[1][1]) else best[0][0]

        chosen_text = {p: numbered_list(list(g.loc[g["solution_type"] == "chosen", "steps"].item()))
                       for p, g in prepared.groupby("problem_id")}
        expected_verdicts, expected_swapped = {}, {}
        for row in recorded.to_dict("records"):
            mine, theirs = numbered_list(list(row["steps"])), chosen_text[row["problem_id"]]
            a, b = (theirs, mine) if row["chosen_position"] == "A" else (mine, theirs)
            first = [u for u in server.intended if "## Answer A\n" + a in u and "## Answer B\n" + b in u]
            second = [u for u in server.intended if "## Answer A\n" + b in u and "## Answer B\n" + a in u]
            assert len(first) == 1 and len(second) == 1, row["id"]
            expected_verdicts[row["id"]] = majority(server.intended[first[0]])
            expected_swapped[row["id"]] = majority(server.intended[second[0]])
    got = table.set_index("id")
    for row_id, verdict in expected_verdicts.items():
        assert _none(got.at[row_id, "verdict"]) == verdict, row_id
        assert _none(got.at[row_id, "verdict_swapped"]) == expected_swapped[row_id], row_id
    chosen_rows = prepared.loc[prepared["solution_type"] == "chosen", "id"]
    assert (got.loc[chosen_rows, "reward"] == 0).all() and got.loc[chosen_rows, "verdict"].isna().all()
    nulls = sum(v is None for v in expected_verdicts.values())
    positions = dict(zip(recorded["id"], recorded["chosen_position"], strict=True))
    won = {i: expected_verdicts[i] == positions[i] for i in positions}
    won_both = {i: won[i] and expected_swapped[i] == ("B" if positions[i] == "A" else "A") for i in positions}
    pairs_both = [i for i in positions if expected_verdicts[i] and expected_swapped[i]]
    agreement = sum(expected_verdicts[i] != expected_swapped[i] for i in pairs_both) / len(pairs_both)
    meta = json.loads(output.with_name("algebra.meta.json").read_text())["adapter_details"]
    assert meta["n_null"] == nulls and meta["n_judged"] == 18 and meta["both_orders"] is True
    assert meta["position_agreement"] == pytest.approx(agreement, abs=1e-6)

    out = tmp_path / "tables"
    assert rmeval(["rewardmath-metrics", "--scores", str(scores), "--data", str(sample_tables / "data"),
                   "--subjects", "algebra", "--out", str(out)]) == 0
    rows = {r["aggregation"]: r for r in _csv(out / "rewardmath_metrics_ci.csv")}
    for aggregation, wins in (("pairwise", won), ("pairwise-both", won_both)):
        per_problem = [(0.0, [-1.0 if wins[i] else 1.0 for i in g["id"] if i in wins])
                       for _, g in prepared.groupby("problem_id")]
        assert (float(rows[aggregation]["accuracy"]), float(rows[aggregation]["mrr"])) == _hand_metrics(per_problem)
        assert rows[aggregation]["kind"] == "LLM judge"
    assert rows["pairwise"]["n_missing_verdicts"] == str(nulls)
    assert float(rows["pairwise"]["position_agreement"]) == round(100 * agreement, 2)

    exported = tmp_path / "official" / "judge-pair.json"
    assert rmeval(["rewardmath-export", "--model", "judge-pair", "--scores", str(scores), "--data",
                   str(sample_tables / "data"), "--subjects", "algebra", "--out", str(exported)]) == 0
    rows_out = json.loads(exported.read_text())
    assert [len(r["score"]) for r in rows_out] == [9, 9] and all(len(r["chosen_position"]) == 9 for r in rows_out)
    again = tmp_path / "again"
    assert rmeval(["rewardmath-metrics", "--official", str(exported.parent), "--out", str(again)]) == 0
    (official,) = _csv(again / "rewardmath_metrics_ci.csv")
    assert (official["accuracy"], official["mrr"]) == (rows["pairwise"]["accuracy"], rows["pairwise"]["mrr"])
    assert official["n_missing_verdicts"] == str(nulls)


def test_pairwise_needs_recorded_positions_or_seeded(sample_tables: Path, tmp_path: Path) -> None:
    data = sample_tables / "data" / "algebra.parquet"  # no chosen_position column
    with JudgeServer() as server:
        failed = _score_here(_spec("judge-pair", server, tmp_path / "cache", "pairwise"), data, tmp_path / "o.parquet")
        assert failed.returncode == 2 and "no recorded chosen_position" in failed.stderr
        assert server.requests == 0
        seeded = _score_here(_spec("judge-pair", server, tmp_path / "cache", "pairwise", positions="seeded"), data,
                        tmp_path / "s.parquet")
        assert seeded.returncode == 0, seeded.stderr
        assert server.requests == 18
    table = pd.read_parquet(tmp_path / "s.parquet").dropna(subset=["chosen_position"])
    assert set(table["chosen_position"]) == {"A", "B"}


@pytest.mark.slow(reason="three fresh interpreters: each bad option is a failed `rmeval score` subprocess")
def test_server_errors_and_bad_options_fail_clearly(sample_tables: Path, tmp_path: Path) -> None:
    data = sample_tables / "data" / "algebra.parquet"
    with JudgeServer() as server:
        wrong = json.loads(_spec("j", server, tmp_path / "c", "direct"))
        wrong["options"]["model"] = "no/such-model"
        result = _score(json.dumps(wrong), data, tmp_path / "o.parquet")
        assert result.returncode == 2 and "HTTP 404" in result.stderr and "row id=" in result.stderr
        bad = _score(_spec("j", server, tmp_path / "c", "direct", prompt_key="nope"), data, tmp_path / "o.parquet")
        assert bad.returncode == 2 and "no prompt 'nope'" in bad.stderr
        short = _score(_spec("j", server, tmp_path / "c", "direct", max_tokens=9000), data, tmp_path / "o.parquet")
        assert short.returncode == 2 and "max_length" in short.stderr
        assert server.requests <= 3, "a 404 stops the job: at most the requests already in flight"


def test_max_length_truncates_solutions_and_flags_them(sample_tables: Path, tmp_path: Path) -> None:
    data = sample_tables / "data" / "algebra.parquet"
    output = tmp_path / "o.parquet"
    with JudgeServer() as server:
        result = _score_here(_spec("j", server, tmp_path / "c", "direct", max_tokens=64, chars_per_token=3.0)
                        .replace('"max_length": 8192', '"max_length": 300'), data, output)
        assert result.returncode == 0, result.stderr
        sent = [len(b["messages"][0]["content"]) + len(b["messages"][1]["content"]) for b in server.bodies]
    table = pd.read_parquet(output)
    meta = json.loads(output.with_name("o.meta.json").read_text())
    assert table["truncated"].any() and meta["n_truncated"] == int(table["truncated"].sum())
    assert max(sent) <= (300 - 64) * 3.0


def test_stats_tables_label_a_fairness_judge(tmp_path: Path) -> None:
    from rmeval.benchmarks.fairness.stats.marks import FOOTNOTE, JUDGE_SUFFIX, judge_models, labelled
    from rmeval.benchmarks.fairness.stats.tables import Table, to_markdown

    for model, adapter in (("rm", "sequence-classification"), ("judge", "judge")):
        (tmp_path / model).mkdir()
        (tmp_path / model / "physics.meta.json").write_text(json.dumps({"adapter": adapter}))
    judges = judge_models(tmp_path, ["rm", "judge"])
    assert judges == {"judge"}
    table = Table("table1_anova", "ANOVA", pd.DataFrame({"model": ["rm", "judge"], "f_statistic": [1.0, 2.0]}))
    for_csv, for_humans = labelled(table, judges)
    assert for_csv.frame["model"].tolist() == ["rm", "judge"] and for_csv.frame["note"].tolist()[0] == ""
    assert "Song et al." in for_csv.frame["note"].tolist()[1]
    markdown = to_markdown(for_humans)
    assert f"judge{JUDGE_SUFFIX}" in markdown and FOOTNOTE in markdown
    assert labelled(table, set()) == (table, table)


@pytest.mark.slow(reason="a real `rmeval score` process, SIGKILLed mid-run and resumed")
def test_sigkill_mid_run_resumes_with_the_judge_columns(sample_tables: Path, tmp_path: Path) -> None:
    """A judge job killed after a checkpoint resumes there; its rating / replies columns survive the checkpoint."""
    import signal
    import time

    data = sample_tables / "data" / "algebra.parquet"
    with JudgeServer() as server:
        clean = tmp_path / "clean.parquet"
        assert _score(_spec("j", server, tmp_path / "cache-a", "direct"), data, clean).returncode == 0
        server.fault_plan = [None] * (server.requests + 6) + ["slow"] * 40
        server.slow_s = 30
        spec = json.loads(_spec("j", server, tmp_path / "cache-b", "direct", max_concurrency=1, timeout_s=60))
        output = tmp_path / "resumed.parquet"
        command = [sys.executable, "-m", "rmeval", "score", "--spec", json.dumps(spec), "--task", "pairs", "--input",
                   str(data), "--output", str(output), "--progress-every", "0", "--checkpoint-every", "2",
                   "--max-batch-rows", "2", "--token-budget", "2"]
        job = subprocess.Popen(command, env={**os.environ, KEY_ENV: SECRET}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        partial = output.with_name(output.name + ".partial")
        deadline = time.monotonic() + 60
        while len(list(partial.glob("part-*.parquet"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        job.send_signal(signal.SIGKILL)
        job.wait()
        assert len(list(partial.glob("part-*.parquet"))) >= 2 and not output.exists()
        server.fault_plan = []
        result = _score(json.dumps(spec), data, output)
        assert result.returncode == 0, result.stderr
    assert "resuming from checkpoint" in result.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(output), pd.read_parquet(clean))
    assert json.loads(output.with_name("resumed.meta.json").read_text())["resumed_rows"] >= 4
