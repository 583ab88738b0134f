"""Input tables -> scoring pairs (rmeval.tasks)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from rmeval.errors import RmevalError
from rmeval.tasks import load_pairs


def _write(tmp_path: Path, rows: list[dict], name: str = "in.parquet") -> Path:
    path = tmp_path / name
    pd.DataFrame(rows).to_parquet(path)
    return path


def test_fairness_prompt_is_the_papers_wording(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "2401.00001", "title": "Rough  Volatility\n Models", "abstract": " We model volatility. ", "group": "q-fin"},
        {"id": "2401.00002", "title": "Tensor Networks", "abstract": "We study tensors.", "group": "physics"},
    ])
    pairs = load_pairs(path, "fairness")
    assert pairs.ids == ["2401.00001", "2401.00002"]
    # Song et al. 2025: "Write an abstract for a paper with title <Title>"; line breaks in arXiv titles collapse.
    assert pairs.prompts == [
        "Write an abstract for a paper with title Rough Volatility Models",
        "Write an abstract for a paper with title Tensor Networks",
    ]
    assert pairs.responses == ["We model volatility.", "We study tensors."]
    assert pairs.steps is None


@pytest.mark.parametrize("column", ["title", "abstract"])
def test_empty_title_or_abstract_names_the_row(tmp_path: Path, column: str) -> None:
    row = {"id": "2401.00009", "title": "T", "abstract": "A"}
    row[column] = "   "
    path = _write(tmp_path, [{"id": "2401.00001", "title": "T", "abstract": "A"}, row])
    with pytest.raises(RmevalError, match=rf"2401\.00009.*{column}"):
        load_pairs(path, "fairness")


def test_missing_columns_and_duplicates_are_errors(tmp_path: Path) -> None:
    with pytest.raises(RmevalError, match="missing column"):
        load_pairs(_write(tmp_path, [{"id": "a", "title": "T"}]), "fairness")
    with pytest.raises(RmevalError, match="duplicate id 'a'"):
        load_pairs(_write(tmp_path, [{"id": "a", "prompt": "p", "response": "r"}] * 2, "d.parquet"), "pairs")
    with pytest.raises(RmevalError, match="not found"):
        load_pairs(tmp_path / "absent.parquet", "pairs")
    with pytest.raises(RmevalError, match="unknown task"):
        load_pairs(_write(tmp_path, [{"id": "a"}], "x.parquet"), "nope")


def test_pairs_with_steps_from_parquet(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "p1", "prompt": "What is 1+1?", "response": "1+1=2\nThe answer is 2", "steps": ["1+1=2", "The answer is 2"]},
        {"id": "p2", "prompt": "What is 2+2?", "response": "4", "steps": ["4"]},
    ])
    pairs = load_pairs(path, "pairs")
    assert pairs.steps == [["1+1=2", "The answer is 2"], ["4"]]
    assert pairs.prompts[1] == "What is 2+2?"


def test_jsonl_input(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    pd.DataFrame([{"id": 7, "prompt": "p", "response": "r"}]).to_json(path, orient="records", lines=True)
    assert load_pairs(path, "pairs").ids == ["7"]
