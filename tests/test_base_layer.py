"""The base layer: atomic writes, hashes, the hub/local-path readings and the `--spec` reader."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from rmeval.errors import RmevalError
from rmeval.hub import hub_offline, looks_local
from rmeval.io.atomic import (
    replacing,
    temporary_path,
    write_json_atomic,
    write_parquet_atomic,
    write_text_atomic,
)
from rmeval.io.hashing import CHUNK_BYTES, sha256_file, sha256_text
from rmeval.scoring.spec_argument import read_spec


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "table.md"
    write_text_atomic("old\n", target)
    with pytest.raises(RuntimeError), replacing(target) as temporary:
        temporary.write_text("half")
        raise RuntimeError("disk gone")
    assert target.read_text() == "old\n"
    assert not list(target.parent.glob("*.tmp"))


def test_unique_temporaries_differ_from_the_plain_one(tmp_path: Path) -> None:
    target = tmp_path / "reply.json"
    assert temporary_path(target) == tmp_path / "reply.json.tmp"
    unique = temporary_path(target, unique=True)
    assert unique != temporary_path(target) and unique.name.startswith("reply.json.") and unique.suffix == ".tmp"


def test_json_options_keep_each_callers_layout(tmp_path: Path) -> None:
    document = {"b": "é", "a": Path("x")}
    write_json_atomic(document, tmp_path / "sorted.json")
    write_json_atomic(document, tmp_path / "manifest.json", sort_keys=False, ensure_ascii=False)
    assert (tmp_path / "sorted.json").read_text() == '{\n  "a": "x",\n  "b": "\\u00e9"\n}\n'
    assert (tmp_path / "manifest.json").read_text(encoding="utf-8") == '{\n  "b": "é",\n  "a": "x"\n}\n'
    assert json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))["b"] == "é"


def test_parquet_from_a_frame_and_from_an_empty_arrow_table(tmp_path: Path) -> None:
    write_parquet_atomic(pd.DataFrame({"id": ["a", "b"], "reward": [1.0, 2.0]}), tmp_path / "scores.parquet")
    assert pd.read_parquet(tmp_path / "scores.parquet")["reward"].tolist() == [1.0, 2.0]
    schema = pa.schema([("id", pa.string()), ("steps", pa.list_(pa.string()))])
    write_parquet_atomic(pa.Table.from_pylist([], schema=schema), tmp_path / "empty.parquet")
    assert list(pd.read_parquet(tmp_path / "empty.parquet").columns) == ["id", "steps"]


def test_file_hash_reads_in_chunks_and_matches_hashlib(tmp_path: Path) -> None:
    data = bytes(range(256)) * (CHUNK_BYTES // 256 * 2 + 3)
    (tmp_path / "big.bin").write_bytes(data)
    assert sha256_file(tmp_path / "big.bin") == hashlib.sha256(data).hexdigest()
    assert sha256_text("ü\n") == hashlib.sha256("ü\n".encode()).hexdigest()


@pytest.mark.parametrize(("env", "offline"), [
    ({}, False), ({"HF_HUB_OFFLINE": "1"}, True), ({"HF_HUB_OFFLINE": "true"}, True), ({"HF_HUB_OFFLINE": "ON"}, True),
    ({"HF_HUB_OFFLINE": "0"}, False), ({"HF_HUB_OFFLINE": "off"}, False), ({"HF_HUB_OFFLINE": ""}, False),
    ({"TRANSFORMERS_OFFLINE": "1"}, True),
])
def test_offline_is_read_as_huggingface_hub_reads_it(env: dict[str, str], offline: bool) -> None:
    from huggingface_hub.constants import _is_true

    assert hub_offline(env) is offline
    assert _is_true(env.get("HF_HUB_OFFLINE") or env.get("TRANSFORMERS_OFFLINE")) is offline


def test_local_paths_and_hub_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "mine").mkdir(parents=True)
    assert looks_local("./missing") and looks_local("/abs/model") and looks_local("~/model")
    assert looks_local("models/mine")  # relative, but it exists here
    assert not looks_local("org/name")


def test_spec_argument_inline_or_from_a_file(tmp_path: Path) -> None:
    text = json.dumps({"name": "tiny", "adapter": "sequence-classification", "path": "/models/tiny"})
    (tmp_path / "spec.json").write_text(text)
    assert read_spec(text) == read_spec(f"@{tmp_path / 'spec.json'}")
    with pytest.raises(RmevalError, match="file not found"):
        read_spec(f"@{tmp_path / 'missing.json'}")


def test_the_scoring_modules_import_one_way() -> None:
    """No import cycle among rmeval.scoring's modules, function-level imports included: the job reaches the server
    through the client and the shared protocol module, the server reaches the job's request module, never back."""
    import ast

    from workflow_helpers import REPO_ROOT

    folder = REPO_ROOT / "workflow" / "rmeval" / "scoring"
    edges = {path.stem: {node.module.rpartition(".")[2] for node in ast.walk(ast.parse(path.read_text()))
                         if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rmeval.scoring.")}
             for path in folder.glob("*.py")}

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(step == goal or (step not in seen and reaches(step, goal, seen | {step}))
                   for step in edges.get(start, ()))

    assert [module for module in edges if reaches(module, module)] == []
    assert "server" not in edges["client"] and "job" not in edges["server"]
