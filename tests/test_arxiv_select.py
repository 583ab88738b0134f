"""arxiv-select: cross-group title filter, balanced seeded sample, allow_fewer, manifests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates
from rmeval.benchmarks.fairness.arxiv.select import content_sha256, select_groups
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError

GROUPS = {"mathematics": ["math"], "economics": ["econ"], "systems_science": ["eess.SY"]}


def line(paper_id: str, categories: str, title: str) -> str:
    return json.dumps(
        {
            "id": paper_id,
            "title": title,
            "abstract": f"Abstract of {paper_id}.",
            "categories": categories,
            "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
        }
    )


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    rows = [line(f"2401.{i:05d}", "math.PR", f"Math paper {i}") for i in range(30)]
    rows += [line(f"2402.{i:05d}", "econ.GN", f"Econ paper {i}") for i in range(30)]
    rows += [line(f"2403.{i:05d}", "eess.SY cs.SY", f"Control paper {i}") for i in range(30)]
    # Titles shared between groups (case and spacing differ): dropped from every group.
    rows += [
        line("2404.00001", "math.OC", "A Shared  Title"),
        line("2404.00002", "eess.SY", "a shared title"),
    ]
    rows += [
        line("2404.00003", "econ.TH", "Another shared title"),
        line("2404.00004", "math.ST", "Another Shared Title"),
    ]
    # q-fin.EC is an alias of econ.GN: an economics paper.
    rows += [line("2404.00007", "q-fin.EC", "Markets and welfare")]
    # The same title twice inside one group is not a cross-group title: both kept.
    rows += [line("2404.00005", "math.AG", "Twice in math"), line("2404.00006", "math.AG", "Twice in math")]
    # A duplicate id (another version) counts once.
    rows += [line("2401.00000v2", "math.PR", "Math paper 0")]
    path = tmp_path / "snap.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


def fetch_all(snapshot: Path, out: Path, **overrides) -> ArxivSettings:
    settings = ArxivSettings.from_mapping({"source": "snapshot", "snapshot": str(snapshot), **overrides})
    for group, categories in GROUPS.items():
        fetch_candidates(group, categories, settings, out)
    return settings


def test_shared_titles_are_dropped_from_every_group(snapshot, tmp_path):
    settings = fetch_all(snapshot, tmp_path / "arxiv", papers_per_group=20, candidate_factor=3)
    manifests = select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "data")
    math, econ, sys_ = (manifests[g]["counts"] for g in GROUPS)
    assert (math["eligible"], math["duplicate_ids"], math["shared_title_dropped"]) == (34, 1, 2)
    assert (econ["eligible"], econ["shared_title_dropped"]) == (32, 1)
    assert (sys_["eligible"], sys_["shared_title_dropped"]) == (31, 1)
    for group in GROUPS:
        data = pd.read_parquet(tmp_path / "data" / f"{group}.parquet")
        assert len(data) == 20
        assert not data["title"].str.lower().str.contains("shared").any()
    fetched = pd.read_parquet(tmp_path / "arxiv" / "economics.candidates.parquet").set_index("id")
    assert fetched.loc["2404.00007", "categories"] == "econ.GN"  # q-fin.EC papers are canonical econ.GN
    sys_data = pd.read_parquet(tmp_path / "data" / "systems_science.parquet")
    assert set(sys_data["categories"]) == {"eess.SY"}


def test_manifest_records_provenance_and_output_hashes(snapshot, tmp_path):
    settings = fetch_all(snapshot, tmp_path / "arxiv", papers_per_group=10, seed=7)
    select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "data")
    out = tmp_path / "data" / "economics.parquet"
    manifest = json.loads((tmp_path / "data" / "economics.manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["papers_per_group"] == 10
    assert manifest["source"]["kind"] == "snapshot"
    assert manifest["source"]["sha256"] == hashlib.sha256(snapshot.read_bytes()).hexdigest()
    assert manifest["output"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    frame = pd.read_parquet(out)
    assert manifest["output"]["content_sha256"] == content_sha256(frame)
    assert manifest["date"]["fetched_at"].endswith("Z") and manifest["date"]["selected_at"].endswith("Z")
    steps = list(manifest["counts"])
    assert (
        steps.index("single_group")
        < steps.index("eligible")
        < steps.index("after_title_filter")
        < steps.index("sampled")
    )
    # Re-running gives byte-identical data.
    first = out.read_bytes()
    select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "data")
    assert out.read_bytes() == first


def test_too_few_papers_fails_with_counts_or_follows_allow_fewer(snapshot, tmp_path):
    settings = fetch_all(snapshot, tmp_path / "arxiv", papers_per_group=31)
    with pytest.raises(
        RmevalError, match=r"systems_science: 30 papers < 31: not enough eligible papers.*single_group=31"
    ):
        select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "data")
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").iterdir())

    settings.allow_fewer = "balanced"
    select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "bal")
    assert {len(pd.read_parquet(tmp_path / "bal" / f"{g}.parquet")) for g in GROUPS} == {30}

    settings.allow_fewer = "keep"
    manifests = select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "keep")
    assert manifests["mathematics"]["counts"]["sampled"] == 31
    assert manifests["economics"]["counts"]["sampled"] == 31
    assert manifests["systems_science"]["counts"]["sampled"] == 30


def test_exhausted_candidate_pool_says_which_setting_to_raise(snapshot, tmp_path):
    # candidate_factor=1: the pool holds exactly papers_per_group, and the title filter takes some away.
    settings = fetch_all(snapshot, tmp_path / "arxiv", papers_per_group=32, candidate_factor=1)
    settings.allow_fewer = None
    with pytest.raises(
        RmevalError,
        match=r"mathematics: 3[01] papers < 32: the candidate pool ran out \(raise arxiv.candidate_factor\)",
    ):
        select_groups(list(GROUPS), settings, tmp_path / "arxiv", tmp_path / "data")


def test_settings_must_match_the_fetch(snapshot, tmp_path):
    fetch_all(snapshot, tmp_path / "arxiv", papers_per_group=10)
    other_seed = ArxivSettings.from_mapping({"source": "snapshot", "papers_per_group": 10, "seed": 1})
    with pytest.raises(RmevalError, match="fetched with arxiv.seed=0"):
        select_groups(list(GROUPS), other_seed, tmp_path / "arxiv", tmp_path / "data")
    bigger = ArxivSettings.from_mapping({"source": "snapshot", "papers_per_group": 25})
    with pytest.raises(RmevalError, match="fewer than arxiv.papers_per_group=25"):
        select_groups(list(GROUPS), bigger, tmp_path / "arxiv", tmp_path / "data")
    with pytest.raises(
        RmevalError, match=r"physics.candidates.parquet is missing; run `rmeval arxiv-fetch --group physics`"
    ):
        select_groups([*GROUPS, "physics"], other_seed, tmp_path / "arxiv", tmp_path / "data")


def test_cli_select_and_allow_fewer_flag(snapshot, tmp_path, capsys):
    fetch_all(snapshot, tmp_path / "arxiv", papers_per_group=31)
    argv = [
        "arxiv-select",
        "--groups",
        *GROUPS,
        "--candidates-dir",
        str(tmp_path / "arxiv"),
        "--out-dir",
        str(tmp_path / "data"),
        "--papers-per-group",
        "31",
    ]
    assert rmeval_main(argv) == 2
    assert "Set arxiv.allow_fewer" in capsys.readouterr().err
    assert rmeval_main(argv + ["--allow-fewer", "true"]) == 0
    assert "allow_fewer=balanced: every group gets 30 papers" in capsys.readouterr().err
    assert rmeval_main(argv + ["--allow-fewer", "maybe"]) == 2
    assert "arxiv.allow_fewer: expected false, true" in capsys.readouterr().err


def test_config_keys_are_checked(tmp_path):
    with pytest.raises(RmevalError, match="arxiv: unknown key"):
        ArxivSettings.from_mapping({"source": "snapshot", "papers": 3})
    with pytest.raises(RmevalError, match="arxiv.api: unknown key"):
        ArxivSettings.from_mapping({"source": "api", "api": {"speed": 3}})
    with pytest.raises(RmevalError, match="arxiv.source"):
        ArxivSettings.from_mapping({"source": "ftp"})
    with pytest.raises(RmevalError, match="arxiv.date_from"):
        ArxivSettings.from_mapping({"source": "snapshot", "date_from": "01/02/2020"})
    defaults = ArxivSettings.from_mapping({"source": "api"})
    assert (defaults.papers_per_group, defaults.seed, defaults.allow_fewer) == (2000, 0, None)
    assert defaults.api.delay_seconds == 3.0 and defaults.api.cache_dir == "resources/arxiv_cache"
