"""A benchmark's result never depends on a performance setting.

Each benchmark's rows are scored by the real engine on a tiny model at token budgets 256 and 65536 and in a
shuffled row order; then its own table code runs on each set of scores. Copies of one model input tie bit for bit
(rmeval.scoring.distinct); other rewards differ by at most the engine's tolerance (CONTRIBUTING.md, "Identical
inputs, identical rewards"); the published tables (.md, .tex), every discrete result and the CSVs (within that
tolerance) are the same. The model server and replicas: tests/test_model_server.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.task import fairness_pairs
from rmeval.benchmarks.rewardbench import metrics, tables
from rmeval.benchmarks.rewardbench.cli_metrics import chat_template_used
from rmeval.benchmarks.rewardbench.loading import Source, prepare, read_rows
from rmeval.benchmarks.rewardbench.plan import score_settings
from rmeval.benchmarks.rewardbench.versions import V1, V2
from rmeval.cli import main as rmeval_main
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.tasks import ModelInput, Pairs, pair_rows
from workflow_helpers import torch_threads_kept

FIXTURES = Path(__file__).resolve().parents[1] / ".test" / "rewardbench" / "data"
# CPU fp32, the tiny model: rewards of different texts across budgets and orders (measured: at most 6.2e-7 of the
# reward scale); CONTRIBUTING.md states it.
REWARD_RTOL = 2e-6
# A table's numbers: relative for statistics, absolute for reward differences and means (twice the reward
# tolerance at these models' reward scale, |reward| < 10).
TABLE_RTOL, TABLE_ATOL = 1e-5, 4e-5
VARIANTS = {"budget 256": (256, False), "budget 65536": (65536, False), "shuffled": (4096, True)}


def _scorer(model_dir: Path, name: str = "tiny"):
    spec = spec_from_mapping({"name": name, "path": str(model_dir), "resources": {"gpu": 0}}, where="test")
    return load_scorer(spec, Runtime(device="cpu", dtype="float32"))


def _permuted(pairs: Pairs, order: np.ndarray) -> Pairs:
    pick = order.tolist()
    return replace(pairs, ids=[pairs.ids[i] for i in pick], prompts=[pairs.prompts[i] for i in pick],
                   responses=[pairs.responses[i] for i in pick],
                   steps=None if pairs.steps is None else [pairs.steps[i] for i in pick])


def score_variants(scorer, pairs: Pairs) -> dict[str, pd.DataFrame]:
    """The rows' scores under each performance setting, every table in the input's row order."""
    out = {}
    with torch_threads_kept():
        for name, (budget, shuffle) in VARIANTS.items():
            order = np.random.default_rng(7).permutation(len(pairs)) if shuffle else np.arange(len(pairs))
            run = _permuted(pairs, order)
            table, report = score_rows(scorer, run, scorer.prepare(run), EngineSettings(budget, 64, 0), None, "tiny")
            assert report.distinct_rows == len(set(map(tuple, _rows_of(scorer))))
            out[name] = table.set_index("id").loc[pairs.ids].reset_index()
    return out


def _rows_of(scorer) -> list[np.ndarray]:
    return [scorer.encoded.row(i).tolist() for i in range(len(scorer.encoded.offsets) - 1)]


def assert_copies_tie(variants: dict[str, pd.DataFrame], copies: list[list[str]]) -> None:
    for name, table in variants.items():
        rewards = table.set_index("id")["reward"]
        for group in copies:
            assert len(set(rewards.loc[group].tolist())) == 1, f"{name}: copies {group} differ"


def assert_close_rewards(variants: dict[str, pd.DataFrame]) -> None:
    reference = next(iter(variants.values()))["reward"].to_numpy()
    scale = max(1.0, float(np.abs(reference).max()))
    for name, table in variants.items():
        np.testing.assert_allclose(table["reward"].to_numpy(), reference, rtol=0, atol=REWARD_RTOL * scale,
                                   err_msg=name)


def assert_same_tables(first: Path, other: Path) -> None:
    # (provenance.* records the score files' hashes: what was read, not a result)
    files = sorted(path.relative_to(first) for path in first.rglob("*")
                   if path.is_file() and not path.name.startswith("provenance."))
    assert files, f"no tables in {first}"
    for name in files:
        mine, theirs = first / name, other / name
        if name.suffix == ".json":  # a record of full-precision numbers
            _assert_close_values(json.loads(mine.read_text()), json.loads(theirs.read_text()), str(name))
            continue
        if name.suffix != ".csv":
            assert mine.read_bytes() == theirs.read_bytes(), f"{name} differs"
            continue
        left, right = pd.read_csv(mine), pd.read_csv(theirs)
        assert list(left.columns) == list(right.columns)
        for column in left.columns:
            if pd.api.types.is_float_dtype(left[column]):
                np.testing.assert_allclose(right[column], left[column], rtol=TABLE_RTOL, atol=TABLE_ATOL,
                                           err_msg=f"{name}: {column}")
            else:
                assert left[column].tolist() == right[column].tolist(), f"{name}: {column}"


def _assert_close_values(mine, theirs, where: str) -> None:
    if isinstance(mine, float) and isinstance(theirs, float):
        assert theirs == pytest.approx(mine, rel=TABLE_RTOL, abs=TABLE_ATOL, nan_ok=True), where
    elif isinstance(mine, dict) and isinstance(theirs, dict):
        assert list(mine) == list(theirs), where
        for key in mine:
            _assert_close_values(mine[key], theirs[key], f"{where}: {key}")
    elif isinstance(mine, list) and isinstance(theirs, list):
        assert len(mine) == len(theirs), where
        for index, (left, right) in enumerate(zip(mine, theirs, strict=True)):
            _assert_close_values(left, right, f"{where}[{index}]")
    else:
        assert mine == theirs, where


# ----------------------------------------------------------------------------- RewardBench 1 and 2
def _rb2_rows_with_copies(tmp_path: Path) -> Path:
    """The fixture, and a Focus prompt whose chosen text recurs twice among its rejected completions (the case
    the official pipeline scores as a three-way tie: 1/3)."""
    rows = [json.loads(line) for line in (FIXTURES / "rewardbench2.jsonl").read_text().splitlines()]
    focus = next(row for row in rows if row["subset"] == "Focus")
    copy = {**focus, "id": "focus-copies", "rejected": [focus["chosen"][0], focus["chosen"][0], *focus["rejected"][2:]]}
    path = tmp_path / "rb2.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in [*rows, copy]))
    return path


def _rb_pairs(data: pd.DataFrame, version) -> Pairs:
    raw = score_settings(version, {"model_input": "official", "max_length": 2048})["model_input"]
    return replace(pair_rows(data, "rb"), model_input=ModelInput.from_mapping(raw, "test"))


def _rb_tables(version, data: pd.DataFrame, scores: pd.DataFrame, out: Path) -> list[dict]:
    scored = metrics.join(data, scores, "tiny", out / "scores.parquet")
    if version is V1:
        subsets, sections = metrics.v1_rows(scored)
        tables.v1_subsets_table(subsets, out, "rewardbench_scores")
        tables.v1_sections_table(sections, out, "rewardbench_sections")
        return subsets + sections
    rows = metrics.v2_rows(scored, 50, 0)
    tables.v2_scores_table(rows, out, "rewardbench2_scores")
    return rows


@pytest.mark.parametrize("version", [V1, V2], ids=["rewardbench", "rewardbench2"])
def test_rewardbench_tables_do_not_depend_on_batching(version, tiny_model_dir: Path, tmp_path: Path) -> None:
    path = _rb2_rows_with_copies(tmp_path) if version is V2 else FIXTURES / "rewardbench.jsonl"
    data = prepare(read_rows(Source("local", path=str(path))), version, str(path))
    scorer = _scorer(tiny_model_dir)
    variants = score_variants(scorer, _rb_pairs(data, version))
    assert_close_rewards(variants)
    if version is V2:
        copies = [f"focus-copies#{k}" for k in range(3)]  # the chosen completion and its two copies
        assert_copies_tie(variants, [copies])
    results = {}
    for name, scores in variants.items():
        results[name] = _rb_tables(version, data, scores, tmp_path / name)
    first = next(iter(results))
    for name in results:
        assert results[name] == results[first], name
        assert_same_tables(tmp_path / first, tmp_path / name)
    if version is V2:
        per_prompt = metrics.join(data, variants[first], "tiny", tmp_path / "s.parquet")
        rewards = variants[first].set_index("id")["reward"]
        focus = rewards.loc[[f"focus-copies#{k}" for k in range(4)]]
        if focus.iloc[0] == focus.max():  # the three copies share the top: the official 1/3
            assert metrics.best_of_n(focus.tolist(), "focus") == pytest.approx(1 / 3)
        assert per_prompt.model == "tiny"


def test_the_export_names_the_template_it_used(tmp_path: Path) -> None:
    meta = tmp_path / "m.meta.json"
    for details, expected in (({"chat_template_source": "tokenizer", "chat_template_sha256": "ab"}, "tokenizer"),
                              ({"chat_template_source": "registry", "chat_template_sha256": "0123"}, "registry:0123"),
                              ({}, None)):
        meta.write_text(json.dumps({"adapter_details": details}))
        assert chat_template_used(meta) == expected


# ----------------------------------------------------------------------------- fairness, unpaired and paired
WORDS = ("reward models rate answers about tensor networks volatility auctions protein folding beamforming "
         "stochastic gradient group fairness across disciplines").split()
GROUPS = ("biology", "economics", "physics")


def _corpus(tmp_path: Path) -> Path:
    """A paired corpus: pair p holds one response per group; group tables repeat a text within themselves."""
    rng = np.random.default_rng(4)
    folder = tmp_path / "data"
    folder.mkdir()
    for group in GROUPS:
        responses = [" ".join(rng.choice(WORDS, int(rng.integers(5, 60)))) for _ in range(12)]
        responses[5] = responses[2]  # a text the table holds twice
        frame = pd.DataFrame({"id": [f"{group}-{p}" for p in range(12)], "prompt": "Summarise the finding.",
                              "response": responses, "group": group, "label": group,
                              "pair": [f"p{p}" for p in range(12)]})
        frame.to_parquet(folder / f"{group}.parquet")
    return folder


def test_fairness_tables_unpaired_and_paired_do_not_depend_on_batching(tiny_model_dir: Path, tmp_path: Path) -> None:
    data = _corpus(tmp_path)
    scorer = _scorer(tiny_model_dir)
    by_group = {}
    for group in GROUPS:
        pairs = fairness_pairs(pd.read_parquet(data / f"{group}.parquet"), group)
        by_group[group] = score_variants(scorer, pairs)
        assert_close_rewards(by_group[group])
        assert_copies_tie(by_group[group], [[f"{group}-2", f"{group}-5"]])
    scores, out = tmp_path / "scores", tmp_path / "tables"  # one place for every variant: the record names it
    for name in VARIANTS:
        (scores / "tiny").mkdir(parents=True, exist_ok=True)
        for group in GROUPS:
            by_group[group][name].to_parquet(scores / "tiny" / f"{group}.parquet")
        with torch_threads_kept():
            assert rmeval_main(["fairness-stats", "--scores", str(scores), "--out", str(out), "--pairs", str(data),
                                "--corpus", "--bootstrap", "200", "--permutations", "200"]) == 0
        out.rename(tmp_path / name)
    assert (tmp_path / "shuffled" / "table_paired.csv").is_file(), "the paired design's tables were written"
    first = next(iter(VARIANTS))
    for name in VARIANTS:
        assert_same_tables(tmp_path / first, tmp_path / name)


# ----------------------------------------------------------------------------- RewardMATH with a PRM
def test_prm_step_rewards_do_not_depend_on_batching(tiny_prm_dir: Path) -> None:
    spec = spec_from_mapping({"name": "prm", "path": str(tiny_prm_dir), "adapter": "prm", "resources": {"gpu": 0}},
                             where="test")
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    rng = np.random.default_rng(5)
    steps = [[" ".join(rng.choice(WORDS, int(rng.integers(3, 25)))) for _ in range(int(rng.integers(1, 5)))]
             for _ in range(30)]
    steps[9] = list(steps[3])  # one solution twice (the same steps: the same input)
    pairs = Pairs(ids=[f"s{i}" for i in range(30)], prompts=["Solve 2 + 2."] * 30,
                  responses=[" ".join(row) for row in steps], steps=steps)
    variants = score_variants(scorer, pairs)
    assert_close_rewards(variants)
    assert_copies_tie(variants, [["s3", "s9"]])
    for name, table in variants.items():
        by_id = table.set_index("id")["step_rewards"]
        assert list(by_id["s3"]) == list(by_id["s9"]), name
        reference = next(iter(variants.values())).set_index("id")["step_rewards"]
        for row in pairs.ids:
            np.testing.assert_allclose(list(by_id[row]), list(reference[row]), rtol=0, atol=REWARD_RTOL, err_msg=name)
        # the step rewards' aggregations and the solutions' order (what RewardMATH's tables rank) agree
        assert table["reward"].rank().tolist() == next(iter(variants.values()))["reward"].rank().tolist(), name


def _rewardmath_data(tmp_path: Path) -> Path:
    """Prepared RewardMATH tables: three problems of four step-split solutions (a rejected solution that repeats the
    chosen one's steps) and RewardBench math-prm pairs, one of them a chosen solution equal to its rejected one."""
    from rmeval.benchmarks.rewardmath import prepare as rewardmath_prepare

    rng = np.random.default_rng(6)
    records = []
    for problem, subject in (("10", "Algebra"), ("11", "Algebra"), ("12", "Geometry")):
        solutions = [[" ".join(rng.choice(WORDS, int(rng.integers(3, 12)))) for _ in range(int(rng.integers(1, 4)))]
                     for _ in range(4)]
        solutions[2] = list(solutions[0])
        for k, steps in enumerate(solutions):
            records.append({"problem": f"Problem {problem}: add the numbers.", "answer": "1", "eval_solution": steps,
                            "solution_reference": "human_to_GPT-4" if k == 0 else f"m{k}",
                            "solution_type": "chosen" if k == 0 else "rejected", "subject": subject, "level": 2,
                            "problem_id": problem, "id": f"{problem}-{k}"})
    rm = tmp_path / "rm.jsonl"
    rm.write_text("".join(json.dumps(r) + "\n" for r in records))
    pairs = [{"problem_id": i, "problem": f"RB {i}", "subject": "Algebra", "level": 2,
              "chosen_steps": ["good step", "then done"], "rejected_steps": ["good step", "then done"] if i == 0
              else ["bad step"]} for i in range(3)]
    rb = tmp_path / "rb.jsonl"
    rb.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    data = tmp_path / "data"
    assert rewardmath_prepare.main(["--source", "local", "--path", str(rm), "--rewardbench-source", "local",
                                    "--rewardbench-path", str(rb), "--out", str(data)]) == 0
    return data


def test_rewardmath_tables_with_a_prm_do_not_depend_on_batching(tiny_prm_dir: Path, tmp_path: Path) -> None:
    from rmeval.benchmarks.rewardmath import cli_metrics

    data = _rewardmath_data(tmp_path)
    spec = spec_from_mapping({"name": "prm", "path": str(tiny_prm_dir), "adapter": "prm", "resources": {"gpu": 0}},
                             where="test")
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32"))
    tables = sorted(path for path in data.glob("*.parquet") if len(pd.read_parquet(path)))  # subjects with rows
    assert {path.stem for path in tables} >= {"algebra", "geometry", "rewardbench_math_prm"}
    by_table = {}
    for path in tables:
        pairs = pair_rows(pd.read_parquet(path), str(path))
        by_table[path.stem] = score_variants(scorer, pairs)
        assert_close_rewards(by_table[path.stem])
    assert_copies_tie(by_table["algebra"], [["10-0", "10-2"], ["11-0", "11-2"]])
    rb_ids = by_table["rewardbench_math_prm"]["budget 256"]["id"].tolist()
    assert_copies_tie(by_table["rewardbench_math_prm"], [[i for i in rb_ids if i.startswith("0:")]])
    scores, out = tmp_path / "scores", tmp_path / "tables"
    for name in VARIANTS:
        (scores / "prm").mkdir(parents=True, exist_ok=True)
        for stem, variants in by_table.items():
            variants[name].to_parquet(scores / "prm" / f"{stem}.parquet")
        assert cli_metrics.main(["--scores", str(scores), "--data", str(data), "--out", str(out)]) == 0
        out.rename(tmp_path / name)
    first = next(iter(VARIANTS))
    for name in VARIANTS:
        assert_same_tables(tmp_path / first, tmp_path / name)
