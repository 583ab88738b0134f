"""The `baseline` adapter (rmeval.models.baseline): trivial rewards configured like a model, scored by the engine
with no weights, no GPU and no torch; and how the shared stages treat it (registry, resources, download, preflight,
lock)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.cli import main as rmeval
from rmeval.errors import RmevalError
from rmeval.models.baseline import BaselineRule, random_reward, scored_baselines, sidecar_baseline
from rmeval.models.catalogue import ADAPTERS, is_baseline
from rmeval.preflight import Plan, collect
from rmeval.registry import ModelSpec, load_registry, spec_from_mapping
from rmeval.resources import scoring_resources
from workflow_helpers import REPO_ROOT

REGISTRY = load_registry(REPO_ROOT / "config" / "models.yaml")
# Texts with what breaks naive lengths: multi-byte characters, a combining accent, an emoji, newlines, a copy.
PROMPTS = ["Explain.", "Explain.", "Résumé?", "Q", "Q", "Explain."]
RESPONSES = ["short", "a longer answer\nover two lines", "naïve café ☕", "e\u0301", "🙂🙂", "short"]


def _table(path: Path, order: list[int] | None = None) -> Path:
    rows = [{"id": f"r{i}", "prompt": p, "response": r} for i, (p, r) in enumerate(zip(PROMPTS, RESPONSES, strict=True))]
    pd.DataFrame([rows[i] for i in (order or range(len(rows)))]).to_parquet(path)
    return path


def _score(spec: dict, table: Path, out: Path, *flags: str) -> pd.DataFrame:
    assert rmeval(["score", "--spec", json.dumps(spec), "--task", "pairs", "--input", str(table),
                   "--output", str(out), *flags]) == 0
    return pd.read_parquet(out).set_index("id")


def _spec(kind: str, **options: object) -> dict:
    return {"name": f"{kind}-b", "adapter": "baseline", "options": {"kind": kind, **options}}


def test_length_is_the_number_of_characters_of_the_response(tmp_path: Path) -> None:
    scores = _score(_spec("length"), _table(tmp_path / "in.parquet"), tmp_path / "s" / "len" / "t.parquet")
    expected = {f"r{i}": float(len(response)) for i, response in enumerate(RESPONSES)}
    assert scores["reward"].to_dict() == expected  # characters (code points), not bytes or tokens
    assert expected["r2"] == 12 and expected["r3"] == 2 and len("🙂🙂".encode()) == 8
    assert not scores["truncated"].any()
    # no tokenizer: n_tokens counts the characters the row holds (prompt and response)
    assert scores["n_tokens"].to_dict() == {f"r{i}": len(p) + len(r)
                                            for i, (p, r) in enumerate(zip(PROMPTS, RESPONSES, strict=True))}
    meta = json.loads((tmp_path / "s" / "len" / "t.meta.json").read_text())
    assert meta["adapter"] == "baseline" and meta["revision"] == "baseline:length" and meta["dtype"] == "n/a"
    assert meta["path"] == "baseline:length" and meta["adapter_details"] == {"baseline": "length"}
    assert meta["distinct_sequences"] == 5  # r5 copies r0: scored once
    assert sidecar_baseline(tmp_path / "s" / "len" / "t.parquet") == BaselineRule("length")
    assert scored_baselines(tmp_path / "s", ["len", "absent"]) == {"len": BaselineRule("length")}


def test_random_is_a_function_of_seed_prompt_and_response_only(tmp_path: Path) -> None:
    table = _table(tmp_path / "in.parquet")
    shuffled = _table(tmp_path / "shuffled.parquet", order=[5, 3, 1, 0, 4, 2])
    first = _score(_spec("random", seed=7), table, tmp_path / "a" / "t.parquet")["reward"]
    # another order, one row per batch, no checkpoint: the same reward per row, bit for bit
    again = _score(_spec("random", seed=7), shuffled, tmp_path / "b" / "t.parquet", "--max-batch-rows", "1",
                   "--checkpoint-every", "0")["reward"]
    assert again.loc[first.index].tolist() == first.tolist()
    # its definition, row by row: nothing but (seed, prompt, response) enters
    assert first.tolist() == [random_reward(7, p, r) for p, r in zip(PROMPTS, RESPONSES, strict=True)]
    assert first["r0"] == first["r5"]  # copies of one text: one reward
    assert first["r0"] != first["r1"] and len(set(first)) == 5
    assert random_reward(7, "Explain.", "short") != random_reward(7, "Explain!", "short")  # the prompt counts
    assert random_reward(7, "ab", "c") != random_reward(7, "a", "bc")  # fields are not run together
    other = _score(_spec("random", seed=8), table, tmp_path / "c" / "t.parquet")["reward"]
    assert all(other != first)  # another seed, other rewards
    assert _score(_spec("random"), table, tmp_path / "d" / "t.parquet")["reward"].tolist() == \
        [random_reward(0, p, r) for p, r in zip(PROMPTS, RESPONSES, strict=True)]  # seed defaults to 0
    meta = json.loads((tmp_path / "a" / "t.meta.json").read_text())
    assert meta["revision"] == "baseline:random:seed=7" and meta["adapter_details"] == {"baseline": "random", "seed": 7}


def test_random_rewards_are_uniform_on_the_unit_interval() -> None:
    from scipy import stats

    values = np.array([random_reward(3, f"prompt {i // 10}", f"response {i}") for i in range(4000)])
    assert values.min() >= 0.0 and values.max() < 1.0
    assert stats.kstest(values, "uniform").pvalue > 0.001  # seeded: deterministic, far from the threshold


def test_constant_is_one_value_for_every_row(tmp_path: Path) -> None:
    table = _table(tmp_path / "in.parquet")
    assert set(_score(_spec("constant"), table, tmp_path / "a" / "t.parquet")["reward"]) == {0.0}
    assert set(_score(_spec("constant", value=-2.5), table, tmp_path / "b" / "t.parquet")["reward"]) == {-2.5}
    assert json.loads((tmp_path / "b" / "t.meta.json").read_text())["revision"] == "baseline:constant:value=-2.5"


def test_options_that_do_not_apply_or_a_missing_kind_are_refused() -> None:
    def problems(options: dict) -> list[str]:
        return ADAPTERS["baseline"].option_problems(options)

    assert problems({"kind": "length"}) == [] and problems({"kind": "random", "seed": 3}) == []
    assert problems({"kind": "length", "seed": 3}) == [
        "options.seed: applies only with kind: random (got kind: 'length'); remove it"]
    assert problems({"kind": "random", "value": 1.0})[0].startswith("options.value: applies only with kind: constant")
    assert problems({"kind": "median"}) == ["options.kind: got 'median'; allowed: length, random, constant"]
    assert problems({})[0].startswith("options.kind: missing")
    with pytest.raises(RmevalError, match="models\\[0\\].options.kind: missing"):
        spec_from_mapping({"name": "b", "adapter": "baseline"}, where="models[0]")
    with pytest.raises(RmevalError, match="path: missing; required"):
        spec_from_mapping({"name": "m"}, where="models[0]")  # a model still needs its path


def test_the_schema_leaves_out_the_path_of_exactly_the_weightless_adapters() -> None:
    from rmeval.registry import _schema

    entry = _schema()["$defs"]["entry"]
    weightless = [name for name, adapter in ADAPTERS.items() if adapter.weightless]
    assert entry["if"]["properties"]["adapter"] == {"enum": weightless} and entry["else"] == {"required": ["path"]}
    assert weightless == ["baseline", "published"]
    assert not any(adapter.loads_model for adapter in ADAPTERS.values() if adapter.weightless or adapter.remote)


def test_registry_baselines_need_no_path_gpu_download_or_preflight(tmp_path: Path) -> None:
    for name, kind in (("length-baseline", "length"), ("random-baseline", "random"), ("constant-baseline", "constant")):
        spec = REGISTRY[name]
        assert is_baseline(spec) and spec.options["kind"] == kind and spec.path == f"baseline:{kind}"
        assert spec.attn_implementation is None and ModelSpec.from_json(spec.to_json()) == spec
    assert not is_baseline(REGISTRY["Skywork-Reward-V2-Qwen3-0.6B"]) and is_baseline({"adapter": "baseline"})
    from rmeval.registry_listing import rows

    (listed,) = [row for row in rows(REGISTRY, None) if row.name == "length-baseline"]  # `rmeval models`
    assert (listed.adapter, listed.parameters, listed.gpus, listed.revision) == (
        "baseline", "none (baseline)", "0 (no weights)", "n/a (a rule)")
    assert not is_baseline({"path": "org/model"})  # the schema's default adapter
    inline = spec_from_mapping({"name": "len", "adapter": "baseline", "options": {"kind": "length"}}, where="t")
    assert inline.path == "baseline:length" and inline.resources.gpu == 1  # the schema's default ...
    assert scoring_resources(inline)["gpu"] == 0  # ... but its jobs ask for no GPU
    with pytest.raises(RmevalError, match="is a rule on the text and loads no model here"):
        spec_from_mapping({"name": "b", "adapter": "baseline", "options": {"kind": "length"},
                           "attn_implementation": "eager"}, where="t")
    # nothing to download (the marker says so), nothing this machine could lack, even offline
    marker = tmp_path / "len.downloaded.json"
    assert rmeval(["download-model", "--spec", inline.to_json(), "--out", str(marker)]) == 0
    assert json.loads(marker.read_text())["source"] == "none"
    plan = Plan(models={"len": inline}, score_rules=frozenset({"download_model", "score_fairness"}))
    assert collect(plan, env={"HF_HUB_OFFLINE": "1"}, probe=lambda *a: "unreachable",
                   in_cache=lambda repo, rev: False) == []


def test_the_lock_records_the_rule_and_a_rerun_checks_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from rmeval.lock.build import model_locks
    from rmeval.lock.lockfile import Lock
    from rmeval.lock.models import follow_lock

    spec = spec_from_mapping(_spec("random", seed=4), where="t")
    _score(json.loads(spec.to_json()), _table(tmp_path / "in.parquet"), tmp_path / "s" / "random-b" / "t.parquet")
    locked = model_locks({"fairness": [str(tmp_path / "s" / "random-b" / "t.meta.json")]})["random-b"]
    assert locked.to_dict() == {"adapter": "baseline", "path": "baseline:random", "revision": "baseline:random:seed=4",
                                "dtype": "n/a"}
    assert not locked.is_hub
    lock = Lock(rmeval="x", software={}, config_sha256="0", sections={}, models={"random-b": locked})
    followed, expected = follow_lock({"random-b": spec}, lock)
    assert followed["random-b"] == spec and expected == {"random-b": "baseline:random:seed=4"}
    other = spec_from_mapping(_spec("random", seed=5), where="t")  # the config changed the seed after locking
    assert rmeval(["score", "--spec", other.to_json(), "--task", "pairs", "--input", str(tmp_path / "in.parquet"),
                   "--output", str(tmp_path / "x" / "t.parquet"), "--expect-revision", expected["random-b"]]) == 2
    assert "revision baseline:random:seed=5 but the lock says baseline:random:seed=4" in capsys.readouterr().err


def test_scoring_a_baseline_imports_neither_torch_nor_transformers(tmp_path: Path) -> None:
    table = _table(tmp_path / "in.parquet")
    code = ("import json, sys; from rmeval.cli import main; "
            f"rc = main(['score', '--spec', json.dumps({_spec('random')!r}), '--task', 'pairs', '--input', "
            f"{str(table)!r}, '--output', {str(tmp_path / 'o.parquet')!r}]); "
            "print(rc, 'torch' in sys.modules, 'transformers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["0", "False", "False"], done.stderr


def test_rewardmath_and_math_prm_score_the_solutions_as_text(shared_data: Path, tmp_path: Path) -> None:
    """The length baseline on the RewardMATH sample and all 447 RewardBench math-prm pairs, through `rmeval score`
    and `rmeval rewardmath-metrics`: it reads each solution as its text (the steps joined by newlines), so its
    accuracy is what the texts' lengths say, equals the table's own `longest solution` rule, and its rows are this
    run's, of kind baseline, out of the capability file."""
    import csv

    from rmeval.benchmarks.rewardmath.subjects import REWARDBENCH_STEM

    rm = shared_data / "rewardmath"
    data, scores, out = tmp_path / "data", tmp_path / "scores", tmp_path / "tables"
    assert rmeval(["rewardmath-prepare", "--source", "local", "--path",
                   str(rm / "benchmark_samples" / "RewardMATH_direct.json"), "--rewardbench-source", "local",
                   "--rewardbench-path", str(rm / "rewardbench_math_prm_pairs.jsonl"), "--out", str(data)]) == 0
    spec = REGISTRY["length-baseline"].to_json()
    for stem in ("algebra", REWARDBENCH_STEM):
        assert rmeval(["score", "--spec", spec, "--task", "pairs", "--input", str(data / f"{stem}.parquet"),
                       "--output", str(scores / "length-baseline" / f"{stem}.parquet")]) == 0
    assert rmeval(["rewardmath-metrics", "--scores", str(scores), "--data", str(data), "--subjects", "algebra",
                   "--out", str(out)]) == 0

    def rows(stem: str) -> dict[tuple[str, str], dict[str, str]]:
        with (out / f"{stem}.csv").open(newline="") as handle:
            return {(row["source"], row["setup"]): row for row in csv.DictReader(handle)}

    # RewardMATH: the chosen solution wins when its text is strictly the longest of its problem's
    problems = pd.read_parquet(data / "algebra.parquet")
    wins = [max(len("\n".join(s)) for s in group.loc[group["solution_type"] != "chosen", "steps"])
            < len("\n".join(group.loc[group["solution_type"] == "chosen", "steps"].item()))
            for _, group in problems.groupby("problem_id")]
    metrics = rows("rewardmath_metrics")
    ours = metrics[("workflow", "length-baseline")]
    assert (ours["kind"], ours["n"]) == ("baseline", str(len(wins)))
    assert float(ours["accuracy"]) == pytest.approx(100 * sum(wins) / len(wins), abs=0.005)
    assert ours["accuracy"] == metrics[("baseline", "longest solution")]["accuracy"]
    # RewardBench math-prm: one-to-one, a tie a loss
    pairs = [json.loads(line) for line in (rm / "rewardbench_math_prm_pairs.jsonl").read_text().splitlines() if line]
    won = [len("\n".join(p["chosen_steps"])) > len("\n".join(p["rejected_steps"])) for p in pairs]
    math_prm = rows("rewardbench_math_prm_accuracy")
    ours = math_prm[("workflow", "length-baseline")]
    assert ours["kind"] == "baseline" and ours["n"] == str(len(pairs)) == "447"
    assert float(ours["accuracy"]) == pytest.approx(100 * sum(won) / len(won), abs=0.005)
    assert ours["accuracy"] == math_prm[("baseline", "longest solution")]["accuracy"]
    assert "trivial baselines scored as models" in (out / "rewardmath_metrics.md").read_text()
    with (out / "rewardmath_capability.csv").open(newline="") as handle:
        assert list(csv.DictReader(handle)) == []  # a baseline is not a model whose capability is measured


def test_fairness_tables_mark_a_baseline_after_the_row_s_own_note() -> None:
    from rmeval.benchmarks.fairness.stats.marks import (
        BASELINE_SUFFIX,
        JUDGE_SUFFIX,
        labelled,
        without_baseline_note,
    )
    from rmeval.benchmarks.fairness.stats.tables import Table, to_latex, to_markdown

    frame = pd.DataFrame({"model": ["rm", "judge", "len"], "f_statistic": [1.0, 2.0, 3.0],
                          "note": ["", "", "every group constant"]})
    table = Table("table1_anova", "ANOVA", frame, "Own note.")
    for_csv, for_humans = labelled(table, {"judge"}, {"len": BaselineRule("length")})
    assert for_csv.frame["model"].tolist() == ["rm", "judge", "len"]  # the CSV keeps the names
    notes = for_csv.frame["note"].tolist()
    assert notes[0] == "" and notes[1].startswith("LLM judge")
    assert notes[2] == ("every group constant; trivial baseline, not a reward model: reward = the number of "
                        "characters of the response")
    assert without_baseline_note(notes[2]) == "every group constant" and without_baseline_note(notes[1]) == notes[1]
    assert for_humans.frame["model"].tolist() == ["rm", f"judge{JUDGE_SUFFIX}", f"len{BASELINE_SUFFIX}"]
    markdown, latex = to_markdown(for_humans), to_latex(for_humans)
    assert "len (baseline‡)" in markdown and "‡ A trivial baseline, not a reward model" in markdown
    assert "len (baseline‡)" in latex
    pairs = Table("table9", "pairs", pd.DataFrame({"model_a": ["rm"], "model_b": ["len"], "kendall_tau": [0.1]}))
    assert "trivial baseline" in labelled(pairs, set(), {"len": BaselineRule("length")})[0].frame["note"].item()
    assert labelled(table, set(), {}) == (table, table)
