"""The benchmarks' manifest lock sections (`rmeval.lock.manifest`: RewardBench 1 and 2, RM-Bench, JudgeBench, RMB)
write, read back, show and diff a lock byte for byte as each benchmark's own lock.py did before they shared one
home.

tests/lock_manifests/*.local.json and judgebench/rmbench.hub.json are real manifests, written by each benchmark's
prepare stage: on the `.test/` scenarios' inputs (local), and from test_judgebench's / test_rmbench's loopback Hub
(hub). RewardBench's and RMB's Hub records are derived from the local ones (their fields as prepare.py writes them
for the Hub). golden/ holds what the per-benchmark sections wrote from them (commit fd73b9e; `python
tests/test_lock_manifest.py` wrote it): lock.yaml files, `rmeval lock show` and `rmeval lock diff` outputs, the
errors of malformed records and the benchmarks' own readers of a lock.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
MANIFESTS = TESTS / "lock_manifests"
GOLDEN = MANIFESTS / "golden"
BENCHMARKS = ("rewardbench", "rewardbench2", "judgebench", "rmb", "rmbench")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _manifest(name: str) -> dict[str, Any]:
    return json.loads((MANIFESTS / f"{name}.json").read_text(encoding="utf-8"))


def _hub_manifests() -> dict[str, dict[str, Any]]:
    """Each benchmark's Hub manifest: JudgeBench's and RM-Bench's as their prepare stages wrote them; RewardBench's
    (rewardbench/prepare.py: dataset, split, revision, resolved_revision instead of path, sha256) and RMB's
    (rmb/prepare.py: repository, revision, archive_sha256 instead of path) from the local ones."""
    hub: dict[str, dict[str, Any]] = {}
    for version, dataset, split in (("rewardbench", "allenai/reward-bench", "filtered"),
                                    ("rewardbench2", "allenai/reward-bench-2", "test")):
        local = _manifest(f"{version}.local")
        hub[version] = {**{key: value for key, value in local.items() if key not in ("path", "sha256")},
                        "source": "hf", "dataset": dataset, "split": split, "revision": None,
                        "resolved_revision": COMMIT if version == "rewardbench" else None}
    rmb = {key: value for key, value in _manifest("rmb.local").items() if key != "path"}
    files = dict(rmb["files"])
    files.pop(sorted(files)[0])  # one file fewer, one changed, one more: a per-file line each
    files[sorted(files)[0]] = "0" * 64
    files["Pairwise_set/Helpfulness/Chat/Added.json"] = "f" * 64
    hub["rmb"] = {**rmb, "source": "hub", "repository": "Zhou-Zoey/RMB-Reward-Model-Benchmark", "revision": COMMIT,
                  "archive_sha256": "ab" * 32, "files": files}
    hub["judgebench"] = _manifest("judgebench.hub")
    hub["rmbench"] = _manifest("rmbench.hub")
    return hub


def _edited(manifests: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The local manifests with every kind of change a diff names: scalars, a mapping held whole, per-split fields
    (changed, added, removed), a split added."""
    edited = copy.deepcopy(manifests)
    edited["rewardbench"].update(rows=7, subsets={**edited["rewardbench"]["subsets"], "hep-python": 2})
    edited["rewardbench2"]["sha256"] = "cd" * 32
    splits = edited["judgebench"]["splits"]
    splits["gpt"]["pairs"] = 11
    splits["gpt"]["resolved_revision"] = COMMIT
    del splits["claude"]["published_bytes"]
    splits["new"] = {"file": "inputs/judgebench/new.jsonl", "sha256": "e" * 64, "pairs": 1}
    edited["rmb"].update(texts=18, items={"bon": 5, "pairwise": 5})
    edited["rmb"]["files"]["BoN_set/Harmlessness/S1.json"] = "1" * 64
    edited["rmbench"].update(prompts=9, domains={**edited["rmbench"]["domains"], "chat": 1})
    return edited


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """Run with `folder` as the working directory, so outputs name the locks by their file names."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _command(*argv: str) -> str:
    from rmeval.lock.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return f"{out.getvalue()}[exit {code}]\n"


def _write_lock(folder: Path, name: str, manifests: dict[str, dict[str, Any]]) -> str:
    """lock.yaml of a run with these manifests (run-level records fixed: they are the shared lock's, not here)."""
    from rmeval.lock.build import build_lock

    inputs: dict[str, dict[str, str]] = {}
    for benchmark, manifest in manifests.items():
        path = folder / f"{name}.{benchmark}.manifest.json"
        path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        inputs[benchmark] = {"manifest": str(path)}
    lock = dataclasses.replace(build_lock("c" * 64, {}, inputs), rmeval="0.0.0", software={"python": "3.11.7"})
    text = lock.to_yaml()
    (folder / f"{name}.lock.yaml").write_text(text, encoding="utf-8")
    return text


def _errors() -> str:
    """The error of every kind of malformed record, one line each."""
    from rmeval.errors import RmevalError
    from rmeval.lock.lockfile import parse_lock

    local = {name: _manifest(f"{name}.local") for name in BENCHMARKS}
    bad: list[tuple[str, Any]] = [("rewardbench_data", ["not", "a", "mapping"])]
    for benchmark, required in (("rewardbench", ("source", "rows")), ("rewardbench2", ("source", "rows")),
                                ("judgebench", ("source", "splits")), ("rmb", ("source", "files")),
                                ("rmbench", ("source", "sha256"))):
        for name in required:
            bad.append((f"{benchmark}_data", {key: value for key, value in local[benchmark].items() if key != name}))
    bad += [("rmb_data", {**local["rmb"], "files": ["a.json"]}),
            ("judgebench_data", {**local["judgebench"], "splits": ["gpt"]}),
            ("judgebench_data", {**local["judgebench"], "splits": {"gpt": "a" * 64}}),
            ("judgebench_data", {**local["judgebench"], "splits": {"gpt": {"sha256": 7}}}),
            ("judgebench_data", {**local["judgebench"], "splits": {"gpt": {"file": "x"}}})]
    lines = []
    for key, record in bad:
        try:
            parse_lock({"lock_format": 1, key: record}, "lock.yaml")
            lines.append(f"{key}: read without an error")
        except RmevalError as error:
            lines.append(str(error))
    return "\n".join(lines) + "\n"


def _readers(folder: Path) -> str:
    """What the benchmarks read from a followed lock: JudgeBench's split hashes and commit (a parsed lock), RM-Bench's
    record and RMB's file hashes (the lock as written)."""
    from rmeval.benchmarks.rmb.prepare import locked_files
    from rmeval.benchmarks.rmbench.lock import locked_record
    from rmeval.lock.lockfile import load_lock

    lines = []
    for name in ("local", "hub", "edited"):
        path = folder / f"{name}.lock.yaml"
        judgebench = load_lock(path).sections["judgebench"]
        lines.append(f"{name}: judgebench split_sha256 {json.dumps(judgebench.split_sha256())}, resolved_revision "
                     f"{judgebench.resolved_revision()!r}")
        lines.append(f"{name}: rmbench locked_record {json.dumps(locked_record(str(path)))}")
        lines.append(f"{name}: rmb locked_files {json.dumps(locked_files(str(path)))}")
    lines.append(f"no lock: rmbench locked_record {locked_record(None)!r}")
    return "\n".join(lines) + "\n"


def outputs(folder: Path) -> dict[str, str]:
    """Every golden file's text, from the current code, built in `folder`."""
    local = {name: _manifest(f"{name}.local") for name in BENCHMARKS}
    texts = {
        "local.lock.yaml": _write_lock(folder, "local", local),
        "hub.lock.yaml": _write_lock(folder, "hub", _hub_manifests()),
        "edited.lock.yaml": _write_lock(folder, "edited", _edited(local)),
        "partial.lock.yaml": _write_lock(folder, "partial", {"rmbench": local["rmbench"]}),
    }
    with _inside(folder):
        for name in ("local", "hub", "edited", "partial"):
            texts[f"{name}.show.txt"] = _command("show", f"{name}.lock.yaml")
        texts["diff.txt"] = "".join(
            f"$ rmeval lock diff {first} {second}\n" + _command("diff", f"{first}.lock.yaml", f"{second}.lock.yaml")
            for first, second in (("local", "local"), ("local", "hub"), ("hub", "local"), ("local", "edited"),
                                  ("edited", "local"), ("local", "partial"), ("partial", "hub"))
        )
    texts["errors.txt"] = _errors()
    texts["readers.txt"] = _readers(folder)
    return texts


def test_manifest_sections_write_show_and_diff_as_before(tmp_path):
    produced = outputs(tmp_path)
    assert sorted(produced) == sorted(path.name for path in GOLDEN.iterdir())
    for name, text in produced.items():
        assert text == (GOLDEN / name).read_text(encoding="utf-8"), name


def test_locks_written_before_read_back_byte_identical(tmp_path):
    """A lock the per-benchmark sections wrote, read by the shared one: the same records, written again the same."""
    from rmeval.lock.lockfile import load_lock

    for name in ("local", "hub", "edited", "partial"):
        lock = load_lock(GOLDEN / f"{name}.lock.yaml")
        assert lock.to_yaml() == (GOLDEN / f"{name}.lock.yaml").read_text(encoding="utf-8"), name
    assert set(load_lock(GOLDEN / "local.lock.yaml").sections) == set(BENCHMARKS)


@pytest.mark.parametrize("name", BENCHMARKS)  # not `benchmark`: pytest-benchmark's fixture
def test_a_record_round_trips_and_equals_itself(name, tmp_path):
    from rmeval.lock.section import section_providers

    provider = section_providers()[name]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(_manifest(f"{name}.local")), encoding="utf-8")
    record = provider.build({"manifest": str(path)})
    again = provider.parse(record.to_dict(), "lock.yaml")
    assert again == record and provider.diff(record, again) == []
    assert list(record.to_dict()) == list(provider.keys)


if __name__ == "__main__":  # write golden/ from the current code
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        GOLDEN.mkdir(exist_ok=True)
        for name, text in outputs(Path(scratch)).items():
            (GOLDEN / name).write_text(text, encoding="utf-8")
            print(f"wrote {GOLDEN / name}", file=sys.stderr)
