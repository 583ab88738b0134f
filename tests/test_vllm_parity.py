"""The vLLM engine gives the transformers engine's rewards and tables (CPU, fp32, a real `vllm serve`).

One server for the module (a start costs 12 s and more), reached as `engine: {vllm: {url}}`; the same tiny model
(head_dim 64, which vLLM's CPU attention takes) through the transformers engine is the reference. On the RewardBench
1 and 2, fairness (paired corpus) and RewardMATH fixtures: every reward within 1e-4 absolute, copies of one input
tied exactly on both engines, the ids vLLM got equal to the ids transformers read (no second BOS), and every table
the same. Pairs of different texts whose rewards lie closer than 1e-4 could order differently: they are counted and
named, and none may change a table. The managed server (start, port, restart, stop) is tests/test_vllm_drills.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rmeval.benchmarks.fairness.task import fairness_pairs
from rmeval.benchmarks.rewardbench.loading import Source, prepare, read_rows
from rmeval.benchmarks.rewardbench.versions import V1, V2
from rmeval.cli import main as rmeval_main
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.tasks import Pairs, pair_rows
from test_score_invariance import (
    FIXTURES,
    GROUPS,
    _assert_close_values,
    _corpus,
    _rb2_rows_with_copies,
    _rb_pairs,
    _rb_tables,
    _rewardmath_data,
    assert_same_tables,
)
from vllm_helpers import requires_vllm, started_server, vllm_model
from workflow_helpers import torch_threads_kept

# Real vLLM server processes: out of the fast tier, and only where the vLLM environment is.
pytestmark = [pytest.mark.vllm, pytest.mark.workflow, requires_vllm]
DEV_URL = "RMEVAL_TEST_VLLM_URL"  # while developing: reuse a running server instead of starting one per session
REWARD_ATOL = 1e-4  # the parity bound, CPU fp32; measured: CONTRIBUTING.md, "The vLLM engine"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    folder = tmp_path_factory.mktemp("vllm-parity")
    model = vllm_model(folder / "model")
    if os.environ.get(DEV_URL):  # a server already serving vllm_model(seed 0): the tiny model is built seeded
        yield model, os.environ[DEV_URL]
        return
    for url in started_server(model, folder / "vllm.log"):
        yield model, url


def _scorer(model: Path, engine: object):
    spec = spec_from_mapping({"name": "tiny", "path": str(model), "resources": {"gpu": 0}, "engine": engine},
                             where="test")
    return load_scorer(spec, Runtime(device="cpu", dtype="float32"))


def score_both(served: tuple[Path, str], pairs: Pairs, doubled_bos: bool = False) -> dict[str, pd.DataFrame]:
    """The rows' scores from each engine (input order); checks that vLLM got the ids transformers read: every row
    read one token before its end (the config's pad id `<|eot_id|>` ends it), and with `doubled_bos` (the official
    RewardBench input) the first of two BOS ids hidden and not sent."""
    model, url = served
    tables, encoded = {}, {}
    with torch_threads_kept():
        for name, engine in (("transformers", "transformers"), ("vllm", {"vllm": {"url": url}})):
            scorer = _scorer(model, engine)
            try:
                prepared = scorer.prepare(pairs)
                tables[name], _ = score_rows(scorer, pairs, prepared, EngineSettings(4096, 64, 0), None, "tiny")
                encoded[name] = scorer.encoded
                if name == "vllm":
                    shortened, hidden = _assert_ids_as_read(scorer)
                    assert shortened == len(pairs), "every row ends in the pad id: read one token early"
                    assert (hidden == len(pairs)) if doubled_bos else hidden == 0
            finally:
                scorer.close()
    assert np.array_equal(encoded["vllm"].flat_ids, encoded["transformers"].flat_ids)  # one rendering, one truncation
    assert np.array_equal(encoded["vllm"].offsets, encoded["transformers"].offsets)
    return tables


def _assert_ids_as_read(scorer) -> tuple[int, int]:
    """Each row as sent: its encoded ids (less a first token hidden from attention) up to the last one that is not
    the pad id, the rest pad ids only; never two BOS ids at its start."""
    bos = scorer.tokenizer.bos_token_id
    hidden = scorer.encoded.hidden_first
    shortened = hidden_rows = 0
    for index in range(len(scorer.encoded.offsets) - 1):
        row, sent = scorer.encoded.row(index).tolist(), scorer.request_ids(index)
        start = 1 if hidden is not None and hidden[index] else 0
        assert sent == row[start:start + len(sent)], index
        assert all(token == scorer.pad_id for token in row[start + len(sent):]), index
        assert sent[:2] != [bos, bos], f"row {index}: a doubled BOS reached vLLM"
        shortened += start + len(sent) < len(row)
        hidden_rows += start
    return shortened, hidden_rows


def near_ties(table: pd.DataFrame) -> list[tuple[str, str, float]]:
    """Pairs of rows with different rewards closer than the parity bound (their order may differ between engines)."""
    distinct = table.drop_duplicates("reward").sort_values("reward")
    gaps = np.diff(distinct["reward"].to_numpy())
    ids = distinct["id"].tolist()
    return [(ids[i], ids[i + 1], float(gap)) for i, gap in enumerate(gaps) if gap < REWARD_ATOL]


def assert_parity(tables: dict[str, pd.DataFrame], copies: list[list[str]] = ()) -> list[tuple[str, str, float]]:
    reference, vllm = tables["transformers"], tables["vllm"]
    assert reference["id"].tolist() == vllm["id"].tolist()
    gap = np.abs(reference["reward"].to_numpy() - vllm["reward"].to_numpy())
    worst = int(gap.argmax())
    assert gap.max() <= REWARD_ATOL, f"row {reference['id'][worst]}: |transformers - vllm| = {gap.max():.2e}"
    for column in ("n_tokens", "truncated"):
        assert reference[column].tolist() == vllm[column].tolist(), column
    for name, table in tables.items():
        rewards = table.set_index("id")["reward"]
        for group in copies:
            assert len(set(rewards.loc[group].tolist())) == 1, f"{name}: copies {group} differ"
    ties = near_ties(reference)
    print(f"max |transformers - vllm| = {gap.max():.2e} over {len(gap)} rows; pairs closer than {REWARD_ATOL}: "
          f"{len(ties)} {ties}")
    return ties


@pytest.mark.parametrize("version", [V1, V2], ids=["rewardbench", "rewardbench2"])
def test_rewardbench_rewards_and_tables_equal_the_transformers_engine(served, version, tmp_path: Path) -> None:
    path = _rb2_rows_with_copies(tmp_path) if version is V2 else FIXTURES / "rewardbench.jsonl"
    data = prepare(read_rows(Source("local", path=str(path))), version, str(path))
    tables = score_both(served, _rb_pairs(data, version), doubled_bos=True)
    assert_parity(tables, [[f"focus-copies#{k}" for k in range(3)]] if version is V2 else [])
    results = {name: _rb_tables(version, data, scores, tmp_path / name) for name, scores in tables.items()}
    _assert_close_values(results["transformers"], results["vllm"], "per-subset results")
    assert_same_tables(tmp_path / "transformers", tmp_path / "vllm")


def test_fairness_tables_equal_the_transformers_engine(served, tmp_path: Path) -> None:
    data = _corpus(tmp_path)
    by_group = {}
    for group in GROUPS:
        by_group[group] = score_both(served, fairness_pairs(pd.read_parquet(data / f"{group}.parquet"), group))
        assert_parity(by_group[group], [[f"{group}-2", f"{group}-5"]])
    scores, out = tmp_path / "scores", tmp_path / "tables"
    for engine in ("transformers", "vllm"):
        (scores / "tiny").mkdir(parents=True, exist_ok=True)
        for group in GROUPS:
            by_group[group][engine].to_parquet(scores / "tiny" / f"{group}.parquet")
        with torch_threads_kept():
            assert rmeval_main(["fairness-stats", "--scores", str(scores), "--out", str(out), "--pairs", str(data),
                                "--corpus", "--bootstrap", "200", "--permutations", "200"]) == 0
        out.rename(tmp_path / engine)
    assert (tmp_path / "vllm" / "table_paired.csv").is_file()
    assert_same_tables(tmp_path / "transformers", tmp_path / "vllm")


def test_rewardmath_tables_with_a_classifier_equal_the_transformers_engine(served, tmp_path: Path) -> None:
    from rmeval.benchmarks.rewardmath import cli_metrics

    data = _rewardmath_data(tmp_path)
    by_table = {}
    for path in sorted(p for p in data.glob("*.parquet") if len(pd.read_parquet(p))):
        by_table[path.stem] = score_both(served, pair_rows(pd.read_parquet(path), str(path)))
        assert_parity(by_table[path.stem])
    assert_parity(by_table["algebra"], [["10-0", "10-2"], ["11-0", "11-2"]])
    scores, out = tmp_path / "scores", tmp_path / "tables"
    for engine in ("transformers", "vllm"):
        (scores / "tiny").mkdir(parents=True, exist_ok=True)
        for stem, tables in by_table.items():
            tables[engine].to_parquet(scores / "tiny" / f"{stem}.parquet")
        assert cli_metrics.main(["--scores", str(scores), "--data", str(data), "--out", str(out)]) == 0
        out.rename(tmp_path / engine)
    assert_same_tables(tmp_path / "transformers", tmp_path / "vllm")
