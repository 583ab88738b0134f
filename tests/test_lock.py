"""results/lock.yaml: written by a real Snakemake run (the `lock` scenario of .test/) and byte-identical on a rerun; the locked groups rebuilt
from a snapshot (through the workflow) and through the arXiv API's `id_list` (a loopback server replaying recorded
2026 Atom entries); changed papers and a changed model folder reported by id / by both fingerprints."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import yaml
from rmeval.benchmarks.fairness.arxiv.records import canonical_id, id_version, latest_version
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.benchmarks.fairness.lock.rebuild import rebuild
from rmeval.benchmarks.fairness.lock.section import LockedPaper
from rmeval.cli_settings import settings_json
from rmeval.errors import RmevalError
from rmeval.lock.diff import diff_locks
from rmeval.lock.lockfile import load_lock, parse_lock
from rmeval.lock.models import check_loaded_attn, check_loaded_revision, follow_lock
from rmeval.registry import ModelSpec
from scenarios import Scenario, run_scenario
from workflow_helpers import PAPER_GROUPS, run_snakemake

GROUPS = Scenario("lock").config()["groups"]
ATOM = "{http://www.w3.org/2005/Atom}"
RECORDED = ("arxiv", "raw_formats", "api_atom_2026_arxivpy_json")


LOCK_TARGETS = ("results/lock.yaml", "results/lock_summary.csv")


@dataclass(frozen=True)
class LockedRun:
    workdir: Path
    configfile: Path
    snapshot: Path
    model_dir: Path

    @property
    def lock(self) -> Path:
        return self.workdir / "results" / "lock.yaml"


@pytest.fixture(scope="module")
def locked_run(tmp_path_factory, shared_data, tiny_models) -> LockedRun:
    """The `lock` scenario of .test/, run once for this file, to its lock (data and scores; the tables and figures
    that `rule all` adds are the `fairness` scenario's)."""
    run = run_scenario("lock", tmp_path_factory.mktemp("locked"), shared_data, tiny_models, *LOCK_TARGETS)
    config = run.config
    return LockedRun(run.workdir, run.configfile, run.workdir / config["arxiv"]["snapshot"],
                     run.workdir / config["models"][0]["path"])


def _config_beside(locked_run: LockedRun, workdir: Path, **changes) -> Path:
    """The lock scenario's config with `changes`, for a run in `workdir`, which sees the locked run's inputs/."""
    (workdir / "inputs").symlink_to(locked_run.workdir / "inputs")
    config = {**yaml.safe_load(locked_run.configfile.read_text()), **changes}
    configfile = workdir / "config.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    return configfile


def test_lock_records_papers_with_versions_models_and_software(locked_run):
    text = locked_run.lock.read_text()
    document = yaml.safe_load(text)
    assert "fetched_at" not in text and "wall_s" not in text  # nothing time-dependent
    assert list(document["groups"]) == list(GROUPS)
    lock = load_lock(locked_run.lock)
    from rmeval.benchmarks.fairness.arxiv.select import content_sha256

    for name, group in lock.sections["fairness"].groups.items():
        data = pd.read_parquet(locked_run.workdir / "results" / "data" / f"{name}.parquet")
        assert [p.id for p in group.papers] == list(data["id"])  # the sample, in table order
        assert group.table_sha256 == content_sha256(data)
        assert group.categories == tuple(GROUPS[name])
    versions = {p.version for g in lock.sections["fairness"].groups.values() for p in g.papers}
    assert versions == {"v1", "v2"}  # the snapshot's latest version of each paper
    model = lock.models["tiny"]
    meta = json.loads((locked_run.workdir / "results" / "scores" / "fairness" / "tiny" / "physics.meta.json").read_text())
    assert model.revision == meta["revision"] and model.revision.startswith("local-sha256:")
    assert model.dtype == "float32" and model.adapter == "sequence-classification"
    assert {"python", "torch", "transformers", "tokenizers"} <= set(lock.software)
    assert lock.software["torch"] == meta["versions"]["torch"]
    assert len(lock.config_sha256) == 64 and lock.rmeval
    summary = pd.read_csv(locked_run.workdir / "results" / "lock_summary.csv").set_index(["item", "name"])
    assert summary.loc[("group", "physics"), "locked"].startswith("8 papers")
    assert summary.loc[("model", "tiny"), "locked"].endswith(
        f"@ {model.revision}, float32, attn_implementation sdpa, template_hash {model.extra['template_hash']}")
    assert model.extra["attn_implementation"] == meta["adapter_details"]["attn_implementation"] == "sdpa"
    # the template hash the scoring sidecar records (rmeval.models.chat)
    assert f'"chat_template_sha256": "{model.extra["template_hash"]}"' in json.dumps(meta)


def test_lock_is_byte_identical_on_a_rerun(locked_run):
    """The lock rule run again on the same run's outputs writes the same bytes. (That a whole second run, papers
    sampled and scored again, locks the same papers, tables, model and software is
    test_rebuild_from_the_lock_and_a_snapshot_through_the_workflow's diff.)"""
    first = locked_run.lock.read_bytes()
    # The target before --forcerun, which takes every name after it as a rule to force.
    rerun = run_snakemake(locked_run.workdir, locked_run.configfile, "--cores", "2", "results/lock.yaml",
                          "--forcerun", "lock")
    assert "rule lock:" in rerun.stdout + rerun.stderr
    assert locked_run.lock.read_bytes() == first


def test_rebuild_from_the_lock_and_a_snapshot_through_the_workflow(locked_run, tmp_path):
    """A second lab: `lock:` + `arxiv.source: lock`; same tables, same model, and a lock differing only in
    where the papers came from and the config."""
    published = tmp_path / "published.lock.yaml"
    shutil.copy(locked_run.lock, published)
    arxiv = {**yaml.safe_load(locked_run.configfile.read_text())["arxiv"], "source": "lock"}
    configfile = _config_beside(locked_run, tmp_path, lock=str(published), arxiv=arxiv)
    run_snakemake(tmp_path, configfile, "--cores", "2", *LOCK_TARGETS)
    for name in GROUPS:
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "results" / "data" / f"{name}.parquet"),
            pd.read_parquet(locked_run.workdir / "results" / "data" / f"{name}.parquet"),
        )
    rebuilt_log = (tmp_path / "logs" / "arxiv" / "from_lock.log").read_text()
    assert "matches" in rebuilt_log
    result = subprocess.run([sys.executable, "-m", "rmeval", "lock", "diff", str(published),
                             str(tmp_path / "results" / "lock.yaml")], capture_output=True, text=True)
    assert result.returncode == 1
    changed = {line.split(":")[0] for line in result.stdout.splitlines()}
    assert changed == {"config_sha256", "arxiv.sources"}, result.stdout


def _changed_snapshot(source: Path, out: Path, new_version: str, removed: str) -> None:
    with gzip.open(source, "rt", encoding="utf-8") as handle, gzip.open(out, "wt", encoding="utf-8") as sink:
        for line in handle:
            record = json.loads(line)
            if record["id"] == removed:
                continue
            if record["id"] == new_version:
                number = len(record["versions"]) + 1
                record["versions"].append({"version": f"v{number}", "created": "Mon, 1 Jan 2024 00:00:00 GMT"})
                record["abstract"] = "This paper has been withdrawn by the authors."
            sink.write(json.dumps(record) + "\n")


def test_a_new_version_and_a_missing_paper_are_named_by_id(locked_run, tmp_path):
    lock = load_lock(locked_run.lock)
    physics, maths = (lock.sections["fairness"].groups[name].papers for name in ("physics", "mathematics"))
    snapshot = tmp_path / "changed.json.gz"
    _changed_snapshot(locked_run.snapshot, snapshot, new_version=physics[2].id, removed=maths[0].id)
    settings = ArxivSettings.from_mapping({"source": "lock", "snapshot": str(snapshot)})
    with pytest.raises(RmevalError) as error:
        rebuild(lock, str(locked_run.lock), GROUPS, settings, tmp_path / "data")
    message = str(error.value)
    assert "2 locked paper(s) cannot be rebuilt" in message
    assert f"physics: {physics[2].versioned_id}: the source has version v" in message
    assert f"mathematics: {maths[0].versioned_id}: missing from the source" in message
    assert not (tmp_path / "data").exists()  # nothing written


def test_a_model_folder_changed_after_locking_stops_the_job(locked_run, tmp_path):
    changed = tmp_path / "tiny-changed"
    shutil.copytree(locked_run.model_dir, changed)
    config_json = json.loads((changed / "config.json").read_text())
    config_json["rmeval_note"] = "edited after locking"
    (changed / "config.json").write_text(json.dumps(config_json))
    published = tmp_path / "published.lock.yaml"
    shutil.copy(locked_run.lock, published)
    (model,) = yaml.safe_load(locked_run.configfile.read_text())["models"]
    configfile = _config_beside(locked_run, tmp_path, lock=str(published), models=[{**model, "path": str(changed)}])
    result = run_snakemake(tmp_path, configfile, "--cores", "1", "results/scores/fairness/tiny/physics.parquet", check=False)
    assert result.returncode != 0
    log = (tmp_path / "logs" / "fairness" / "score" / "tiny" / "physics.log").read_text()
    from rmeval.models.hf import local_fingerprint

    locked = load_lock(published).models["tiny"].revision
    now = local_fingerprint(changed)
    assert locked != now
    assert f"found revision {now} but the lock says {locked}" in log
    assert "model server" not in log, "the changed folder is caught before anything loads it"
    assert not (tmp_path / "results" / "scores" / "fairness" / "tiny" / "physics.parquet").exists()


# --- the API path: an original sample from the recorded search page, rebuilt through id_list ---------------


class RecordedArxiv:
    """Loopback arXiv API replaying recorded 2026 responses: the recorded search page for `search_query`, and for
    `id_list` the recorded entries of the asked ids (a versioned id answers that version, a bare id the latest;
    unknown ids are left out, as export.arxiv.org does), inside the recorded multi-id feed's header."""

    def __init__(self, shared_data: Path) -> None:
        from lxml import etree

        folder = shared_data.joinpath(*RECORDED)
        self.search_page = json.loads(next(folder.glob("q_testing_s0_m100_*.json")).read_text())["body"].encode()
        self.entries: dict[str, bytes] = {}
        for path in sorted(folder.glob("*.json")):
            recorded = json.loads(path.read_text())
            if recorded["status_code"] != 200:
                continue
            for entry in etree.fromstring(recorded["body"].encode()).iter(f"{ATOM}entry"):
                self.entries[entry.findtext(f"{ATOM}id").rsplit("/abs/", 1)[-1]] = etree.tostring(entry)
        header = json.loads(next(folder.glob("id_0808.05394_1707.08567_*.json")).read_text())["body"].encode()
        self.feed = etree.fromstring(header)
        for entry in self.feed.findall(f"{ATOM}entry"):
            self.feed.remove(entry)
        self.removed: set[str] = set()
        self.id_requests: list[list[str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                query = parse_qs(urlsplit(self.path).query)
                ids = [i for i in query.get("id_list", [""])[0].split(",") if i]
                body = server.answer(ids) if ids else server.search_page
                self.send_response(200)
                self.send_header("Content-Type", "application/atom+xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def latest(self, paper_id: str) -> str | None:
        versions = [k for k in self.entries if canonical_id(k) == paper_id]
        return max(versions, key=lambda k: int(id_version(k)[1:] or 0), default=None)

    def answer(self, ids: list[str]) -> bytes:
        from lxml import etree

        self.id_requests.append(ids)
        feed = copy.deepcopy(self.feed)
        found = 0
        for asked in ids:
            key = asked if id_version(asked) else self.latest(asked)
            if key in self.entries and canonical_id(key) not in self.removed:
                feed.append(etree.fromstring(self.entries[key]))
                found += 1
        feed.find("{http://a9.com/-/spec/opensearch/1.1/}totalResults").text = str(found)
        return etree.tostring(feed, xml_declaration=True, encoding="UTF-8")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/api/query"

    def __enter__(self) -> RecordedArxiv:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


API_GROUPS = {"computer_science": ["cs"], "economics": ["econ"], "physics": PAPER_GROUPS["physics"]}


def _api_settings(server: RecordedArxiv, tmp_path: Path, source: str = "api") -> ArxivSettings:
    return ArxivSettings.from_mapping({
        "source": source, "papers_per_group": 6, "seed": 0, "allow_fewer": "keep",
        "api": {"base_url": server.url, "page_size": 100, "max_results": 100, "delay_seconds": 0.01,
                "retries": 1, "backoff_seconds": 0.01, "cache_dir": str(tmp_path / "cache")},
    })


def _api_lock(server: RecordedArxiv, tmp_path: Path) -> Path:
    """Sample through the search path (arxiv-fetch + arxiv-select), then `rmeval lock write --settings` (the fairness
    section's inputs as the lock rule hands them)."""
    from rmeval.benchmarks.fairness.arxiv.fetch import fetch_candidates
    from rmeval.benchmarks.fairness.arxiv.select import select_groups
    from rmeval.lock.cli import main as lock_main

    settings = _api_settings(server, tmp_path)
    for name, categories in API_GROUPS.items():
        fetch_candidates(name, categories, settings, tmp_path / "arxiv")
    select_groups(list(API_GROUPS), settings, tmp_path / "arxiv", tmp_path / "data")
    out = tmp_path / "lock.yaml"
    groups = [{"name": name, "data": str(tmp_path / "data" / f"{name}.parquet"),
               "manifest": str(tmp_path / "data" / f"{name}.manifest.json")} for name in API_GROUPS]
    settings = {"config_sha256": "0" * 64, "sections": {"fairness": {"groups": groups}}, "out": str(out)}
    assert lock_main(["write", "--settings", settings_json(settings)]) == 0
    return out


def test_rebuild_through_the_api_id_list_gives_identical_tables(shared_data, tmp_path):
    with RecordedArxiv(shared_data) as server:
        lock_path = _api_lock(server, tmp_path / "original")
        lock = load_lock(lock_path)
        locked_groups = lock.sections["fairness"].groups
        assert [len(g.papers) for g in locked_groups.values()] == [6, 2, 2]
        versions = {p.versioned_id for g in locked_groups.values() for p in g.papers}
        assert all(id_version(v) for v in versions)  # the API's entry ids carry versions
        assert any(id_version(v) != "v1" for v in versions)
        rebuild(lock, str(lock_path), API_GROUPS, _api_settings(server, tmp_path, "lock"), tmp_path / "rebuilt")
        asked = [i for batch in server.id_requests for i in batch]
        assert sorted(asked) == sorted(versions)  # exactly the locked versions, one batch
        again = len(server.id_requests)
        rebuild(lock, str(lock_path), API_GROUPS, _api_settings(server, tmp_path, "lock"), tmp_path / "again")
        assert len(server.id_requests) == again  # the second rebuild came from the cache
    for name in API_GROUPS:
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "rebuilt" / f"{name}.parquet"),
            pd.read_parquet(tmp_path / "original" / "data" / f"{name}.parquet"),
        )
        manifest = json.loads((tmp_path / "rebuilt" / f"{name}.manifest.json").read_text())
        assert manifest["source"]["kind"] == "lock" and manifest["source"]["via"] == "api"
        assert manifest["output"]["content_sha256"] == locked_groups[name].table_sha256


def test_a_paper_the_api_no_longer_has_is_named_by_id(shared_data, tmp_path):
    with RecordedArxiv(shared_data) as server:
        lock_path = _api_lock(server, tmp_path / "original")
        lock = load_lock(lock_path)
        gone = lock.sections["fairness"].groups["economics"].papers[1]
        server.removed.add(gone.id)
        with pytest.raises(RmevalError, match=rf"economics: {gone.versioned_id}: missing from the source"):
            rebuild(lock, str(lock_path), API_GROUPS, _api_settings(server, tmp_path, "lock"), tmp_path / "out")


# --- small pieces ---------------------------------------------------------------------------------------------


def test_versions_of_ids_and_snapshot_records():
    assert id_version("http://arxiv.org/abs/2409.05654v9") == "v9" and id_version("hep-th/9901001") == ""
    assert latest_version([{"version": "v1"}, {"version": "v3"}]) == "v3" and latest_version(None) == ""
    paper = LockedPaper.parse("hep-th/9901001v2 0123456789ab", "here")
    assert (paper.id, paper.version, paper.entry()) == ("hep-th/9901001", "v2", "hep-th/9901001v2 0123456789ab")
    with pytest.raises(RmevalError, match=r"lock.yaml: groups.physics.papers\[0\]"):
        parse_lock({"lock_format": 1, "groups": {"physics": {"categories": ["physics"], "rows": 1,
                                                            "table_sha256": "x", "papers": ["2104.12255v1"]}}},
                   "lock.yaml")


def test_models_follow_the_lock_and_diff_names_what_changed(locked_run):
    lock = load_lock(locked_run.lock)
    document = lock.to_dict()
    document["models"]["hub-rm"] = {"adapter": "sequence-classification", "path": "org/rm", "revision": "c0ffee",
                                    "dtype": "bfloat16"}
    hub_lock = parse_lock(document, "lock")
    specs = {
        "hub-rm": ModelSpec(name="hub-rm", path="org/rm"),
        "pinned": ModelSpec(name="pinned", path="org/other", revision="v1.0"),
    }
    followed, expected = follow_lock(specs, hub_lock)
    assert followed["hub-rm"].revision == "c0ffee"  # the lock's commit wins over revision: null
    assert followed["pinned"].revision == "v1.0" and expected == {"hub-rm": "c0ffee"}
    with pytest.raises(RmevalError, match="loaded revision beef but the lock says c0ffee"):
        check_loaded_revision("hub-rm", "c0ffee", "beef")
    # The attention kernel the locked run loaded binds like its commit (a lock without the key binds nothing).
    document["models"]["hub-rm"]["attn_implementation"] = "eager"
    with pytest.raises(RmevalError, match="attn_implementation 'sdpa' but the lock says eager"):
        follow_lock(specs, parse_lock(document, "lock"))
    eager = {"hub-rm": ModelSpec(name="hub-rm", path="org/rm", attn_implementation="eager")}
    assert follow_lock(eager, parse_lock(document, "lock"))[1] == {"hub-rm": "c0ffee"}
    check_loaded_attn(eager["hub-rm"], "eager")
    with pytest.raises(RmevalError, match="loaded attn_implementation sdpa but the entry asks for 'eager'"):
        check_loaded_attn(eager["hub-rm"], "sdpa")

    changed = copy.deepcopy(lock.to_dict())
    papers = changed["groups"]["physics"]["papers"]
    first = LockedPaper.parse(papers[0], "x")
    papers[0] = LockedPaper(first.id, "v7", first.row_sha).entry()
    removed = papers.pop(1)
    changed["groups"]["physics"]["rows"] = len(papers)
    changed["models"]["tiny"]["revision"] = "local-sha256:0000000000000000"
    lines = diff_locks(lock, parse_lock(changed, "b"))
    assert f"  new version: {first.id} {first.version} -> v7" in lines
    assert f"  removed: {removed.split()[0]}" in lines
    assert any(line.startswith("model tiny: revision:") for line in lines)
    assert diff_locks(lock, load_lock(locked_run.lock)) == []


def test_template_and_prompt_hashes_are_read_where_the_sidecars_put_them(tmp_path):
    from rmeval.lock.build import model_locks

    base = {"model": "m", "adapter": "sequence-classification", "path": "org/m", "revision": "abc", "dtype": "bfloat16"}
    metas = []
    for group, prompt in (("physics", "p1"), ("mathematics", "p2")):
        path = tmp_path / "scores" / "m" / f"{group}.meta.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**base, "prompt_hash": prompt,
                                    "adapter_details": {"chat_template_sha256": "t0"}}))
        metas.append(str(path))
    lock = model_locks({"fairness": metas})["m"]
    assert lock.extra == {"template_hash": "t0",
                          "prompt_hash": {"fairness/mathematics": "p2", "fairness/physics": "p1"}}
    # The benchmark comes from the caller, never from the path (this one has "rewardmath" in it).
    other = tmp_path / "scores" / "rewardmath" / "m" / "Algebra.meta.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({**base, "prompt_hash": "p3"}))
    assert model_locks({"fairness": metas, "x": [str(other)]})["m"].extra["prompt_hash"] == {
        "fairness/mathematics": "p2", "fairness/physics": "p1", "x/Algebra": "p3"}
    (tmp_path / "scores" / "m" / "physics.meta.json").write_text(json.dumps({**base, "revision": "def"}))
    with pytest.raises(RmevalError, match=r"mathematics.meta.json has revision 'abc' but .*physics.meta.json has 'def'"):
        model_locks({"fairness": metas})


# --- the seam: a benchmark's section provider (rmeval.lock.section) ---------------------------------------------


@dataclass(frozen=True)
class Tally:
    """A third benchmark's record: one top-level key `tally`."""

    counts: dict[str, int]

    def to_dict(self) -> dict[str, object]:
        return {"tally": dict(self.counts)}


def _tally_parse(document, where: str) -> Tally:
    from rmeval.lock.section import require

    return Tally(dict(require(document, "tally", dict, where)))


def _tally_diff(a: Tally, b: Tally) -> list[str]:
    return [f"tally.{key}: {a.counts.get(key)} -> {b.counts.get(key)}"
            for key in sorted(set(a.counts) | set(b.counts)) if a.counts.get(key) != b.counts.get(key)]


def _tally_section():
    from rmeval.lock.section import LockSection

    return LockSection(keys=("tally",), locks="tallies", rerun="`tally.source: lock`", build=lambda inputs: Tally(inputs),
                       parse=_tally_parse, diff=_tally_diff,
                       summary_rows=lambda record: [("tally", k, str(v)) for k, v in record.counts.items()])


@pytest.fixture
def tally_first(monkeypatch):
    """A fake benchmark `tally` with a lock section, catalogued before fairness and RewardMATH."""
    import sys
    import types

    import rmeval.benchmarks
    from rmeval.benchmarks.catalogue import Benchmark

    module = types.ModuleType("rmeval_test_tally_catalogue")
    module.LOCK_SECTION = _tally_section()
    module.BENCHMARK = Benchmark(name="tally", title="Tally", rule_file="workflow/rules/tally.smk", outputs=(),
                                 lock_section=f"{module.__name__}:LOCK_SECTION")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    found = rmeval.benchmarks.catalogue()
    monkeypatch.setattr(rmeval.benchmarks, "catalogue", lambda: {"tally": module.BENCHMARK, **found})
    return module.LOCK_SECTION


def test_the_header_names_what_each_provider_locks():
    from rmeval.benchmarks.fairness.lock.provider import LOCK_SECTION
    from rmeval.lock.section import header

    assert header([LOCK_SECTION]) == (  # the text every lock has carried since its first version
        "# rmeval lock: exactly what this run used (arXiv papers with versions, model commits, software).\n"
        "# Rerun it: `lock: <this file>` and `arxiv.source: lock` in a config (README, \"Reproduce our run\").\n")
    assert header([LOCK_SECTION, _tally_section()]).splitlines() == [
        "# rmeval lock: exactly what this run used (arXiv papers with versions, tallies, model commits, software).",
        "# Rerun it: `lock: <this file>` and `arxiv.source: lock` and `tally.source: lock` in a config (README, "
        "\"Reproduce our run\").",
    ]
    assert header([]).startswith("# rmeval lock: exactly what this run used (model commits, software).\n")


def test_a_third_benchmarks_section_is_written_in_catalogue_order_read_and_diffed(tally_first, tmp_path):
    from rmeval.benchmarks.fairness.arxiv.select import DATA_COLUMNS
    from rmeval.lock.build import build_lock
    from rmeval.lock.cli import summary_rows

    data, manifest = tmp_path / "physics.parquet", tmp_path / "physics.manifest.json"
    pd.DataFrame([["2104.12255", "A title", "An abstract.", "physics", "physics"]],
                 columns=DATA_COLUMNS).astype("string").to_parquet(data)
    manifest.write_text(json.dumps({"categories": ["physics"], "versions": {"2104.12255": "v2"}, "seed": 0,
                                    "source": {"kind": "snapshot", "sha256": "s", "bytes": 1}}))
    fairness = {"groups": [{"name": "physics", "data": str(data), "manifest": str(manifest)}]}
    lock = build_lock("0" * 64, {}, {"fairness": fairness, "tally": {"a": 1}})  # not the catalogue's order
    assert list(lock.to_dict()) == ["lock_format", "rmeval", "software", "config_sha256", "tally", "arxiv",
                                    "groups", "models"]
    text = lock.to_yaml()
    assert "(tallies, arXiv papers with versions, model commits, software)" in text.splitlines()[0]
    again = parse_lock(yaml.safe_load(text), "lock.yaml")
    assert again.sections == lock.sections and again.to_yaml() == text
    assert [row[0] for row in summary_rows(again)][-2:] == ["tally", "group"]
    changed = yaml.safe_load(text)
    changed["tally"]["a"] = 2
    assert diff_locks(lock, parse_lock(changed, "b")) == ["tally.a: 1 -> 2"]
    del changed["tally"]
    assert diff_locks(lock, parse_lock(changed, "b")) == ["tally (tally): only in the first lock"]
    with pytest.raises(RmevalError, match=r"lock.yaml.tally: expected dict"):
        parse_lock({**yaml.safe_load(text), "tally": [1]}, "lock.yaml")
    with pytest.raises(RmevalError, match=r"no lock section provider for 'nobody'"):
        build_lock("0" * 64, {}, {"nobody": {}})
