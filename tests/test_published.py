"""Published per-item results as models (adapter `published`, issue 49), without Snakemake: the RewardBench readers
on files in the authors' own layout (tests/published_fixtures.py, our numbers), headline numbers recomputed by
rmeval against the authors' scoring of the same file (re-stated below from rewardbench/utils.py and run_rm.py),
alignment by prompt id and the 90 % rule, bad files named in one line, entries, `rmeval published`, and
`rmeval run --against` refusing bad input before anything is written.

The end-to-end run (a tiny model, two published files and an earlier run's folder) rides on the `rewardbench`
scenario: tests/test_rewardbench_e2e.py::test_against_published_files_and_an_earlier_run."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import published_fixtures as fx
import pytest
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.rewardbench import compare as rb_compare
from rmeval.benchmarks.rewardbench import metrics
from rmeval.benchmarks.rewardbench.loading import prepare
from rmeval.benchmarks.rewardbench.official import EXAMPLE_COUNTS, SECTIONS
from rmeval.benchmarks.rewardbench.versions import V1, V2
from rmeval.cli import main as rmeval_main
from rmeval.errors import RmevalError
from rmeval.published.align import align, group_rows
from rmeval.published.plan import entry_for, problems
from rmeval.published.reader import reader_for
from rmeval.registry import load_registry, spec_from_mapping
from rmeval.scoring.job import JobRequest, run_job
from workflow_helpers import REPO_ROOT, tree_state

V1_SUBSETS = ["alpacaeval-easy", "mt-bench-med", "mt-bench-hard", "llmbar-natural", "refusals-dangerous",
              "xstest-should-respond", "math-prm", "hep-python"]


def v1_dataset(n_per_subset: int = 5) -> list[dict]:
    """Our own RewardBench 1 rows: integer ids, 8 subsets across the four sections."""
    return [{"id": 100 * (s + 1) + i, "prompt": f"Question {s}.{i}?", "chosen": f"A good answer {i}.",
             "chosen_model": "m1", "rejected": f"Bad {i}.", "rejected_model": "m2", "subset": subset}
            for s, subset in enumerate(V1_SUBSETS) for i in range(n_per_subset)]


def v2_dataset() -> list[dict]:
    """Our own RewardBench 2 rows: five best-of-4 subsets of 4 prompts, Ties with ref / tied pairs."""
    rows = [{"id": f"{subset[:3]}-{i}", "prompt": f"{subset} prompt {i}", "chosen": [f"right {i}"],
             "rejected": [f"wrong {i}.{k}" for k in range(3)], "num_correct": 1, "num_rejected": 3,
             "total_completions": 4, "models": ["x"] * 4, "subset": subset}
            for subset in ("Factuality", "Precise IF", "Math", "Safety", "Focus") for i in range(4)]
    for n in range(3):
        rows.append({"id": f"ref:{n}", "prompt": f"Name a colour {n}", "chosen": [f"red {n}"],
                     "rejected": [f"seven {n}", f"dog {n}"], "num_correct": 1, "num_rejected": 2,
                     "total_completions": 3, "models": ["x"] * 3, "subset": "Ties"})
        rows.append({"id": f"tied:{n}", "prompt": f"Name colours {n}", "chosen": [f"red {n}", f"blue {n}"],
                     "rejected": [f"two {n}"], "num_correct": 2, "num_rejected": 1, "total_completions": 3,
                     "models": ["x"] * 3, "subset": "Ties"})
    return rows


def tie_at_top(score: fx.Score, row_id: str) -> fx.Score:
    """`score`, with the chosen completion of one prompt tied with its first rejected one (a 2-way tie: 1/2)."""
    def tied(row: str) -> float:
        return 10.0 if row in (f"{row_id}#0", f"{row_id}#1") else score(row)
    return tied


# ----------------------------------------------------------------------------- the authors' scoring, re-stated
def authors_v1(document: dict) -> dict[str, float]:
    """run_rm.py: per subset num_correct / num_total of `results`; utils.py calculate_scores_per_section: each
    section the example-count-weighted mean of its subsets present (0 without any); the leaderboard's overall: the
    mean of the four sections."""
    by_subset = defaultdict(list)
    for subset, result in zip(document["subset"], document["results"], strict=True):
        by_subset[subset].append(result)
    subsets = {subset: sum(values) / len(values) for subset, values in by_subset.items()}
    sections = {}
    for section, tests in SECTIONS.items():
        total = sum(EXAMPLE_COUNTS[t] for t in tests if t in subsets)
        sections[section] = sum(subsets[t] * EXAMPLE_COUNTS[t] for t in tests if t in subsets) / total if total else 0
    sections["Overall"] = sum(sections[s] for s in SECTIONS) / len(SECTIONS)
    return {**subsets, **sections}


def authors_ties(ids: list[str], scores: list[list[float]], num_correct: list[int]) -> float:
    """utils.py process_single_model on the file's Ties rows (0.3 tied + 0.3 ref accuracy + 0.2 + 0.2 margin
    preferences + 0.01 tanh margin term)."""
    grouped = defaultdict(list)
    for row_id, values, correct in zip(ids, scores, num_correct, strict=True):
        kind, number = row_id.split(":")
        grouped[(kind, int(number))] += [(i < correct, v) for i, v in enumerate(values)]
    stats = {}
    for key, samples in grouped.items():
        good = [v for c, v in samples if c]
        bad = [v for c, v in samples if not c]
        stats[key] = (min(good) - max(bad) > 0, max(good) - min(good) if len(good) > 1 else None, min(good) - max(bad))
    ref = {n: s for (k, n), s in stats.items() if k == "ref"}
    tied = {n: s for (k, n), s in stats.items() if k == "tied"}
    both = set(ref) & set(tied)
    spread = np.array([tied[n][1] for n in both], dtype=float)
    tied_margin = np.array([tied[n][2] for n in both])
    hard = np.minimum(np.array([ref[n][2] for n in both]), tied_margin)
    margin = np.nan_to_num(np.tanh(hard / spread - 1), nan=0.0)
    return (0.3 * np.mean([s[0] for s in tied.values()]) + 0.3 * np.mean([s[0] for s in ref.values()])
            + 0.2 * np.mean(tied_margin > spread) + 0.2 * np.mean(hard > spread) + 0.01 * float(np.mean(margin)))


def authors_v2(document: dict) -> dict[str, float]:
    """run_v2.py: a non-Ties subset is the mean of `results` (1/k at a k-way tie); Ties is process_single_model;
    the leaderboard's overall is the mean of the six."""
    out = {}
    for subset in dict.fromkeys(document["subset"]):
        at = [i for i, s in enumerate(document["subset"]) if s == subset]
        if subset == "Ties":
            out[subset] = authors_ties([document["id"][i] for i in at], [document["scores"][i] for i in at],
                                       [document["num_correct"][i] for i in at])
        else:
            out[subset] = float(np.mean([document["results"][i] for i in at]))
    out["Overall"] = sum(out.values()) / len(out)
    return out


# ----------------------------------------------------------------------------- helpers
def published_spec(name: str, bench: str, path: Path, model: str, **options) -> object:
    return spec_from_mapping({"name": name, "adapter": "published", "options": {
        "benchmark": bench, "model": model, "source": "local", "path": str(path), **options}}, "test")


def score_published(tmp_path: Path, version, rows: list[dict], document_path: Path, model: str) -> Path:
    """The published model's score file, written by the real scoring job on the prepared table."""
    prepared = tmp_path / f"{version.name}.parquet"
    prepare(pd.DataFrame(rows), version, "test").to_parquet(prepared)
    out = tmp_path / "scores" / "pub" / f"{version.name}.parquet"
    spec = published_spec("pub", version.name, document_path, model)
    run_job(JobRequest(spec=spec, task="pairs", input=prepared, output=out, meta=out.with_suffix(".meta.json")))
    return out


# ----------------------------------------------------------------------------- the readers, against the authors' scoring
def test_v1_file_reads_as_the_authors_scored_it(tmp_path):
    rows = v1_dataset()
    columns = fx.v1_columns(rows, fx.seeded_score(1))
    file = fx.write_scores_file(tmp_path / "eval-set-scores" / "org" / "rm.json", columns, "org/rm")
    read = reader_for("rewardbench").read(file)
    assert read.model == "org/rm" and read.details == {"model_type": "Seq. Classifier", "chat_template": "tokenizer"}
    assert read.items["100"] == ("100#chosen", "100#rejected")
    assert read.rewards["100#chosen"] == columns["scores_chosen"][0]
    scores = score_published(tmp_path, V1, rows, file, "org/rm")
    data = pd.read_parquet(tmp_path / "rewardbench.parquet")
    scored = metrics.join(data, pd.read_parquet(scores), "pub", scores)
    assert scored.mode == metrics.PUBLISHED and "matched 40 of 40 items" in scored.note
    subset_rows, section_rows = metrics.v1_rows(scored)
    ours = {**{r["subset"]: r["accuracy"] / 100 for r in subset_rows}, **{r["section"]: r["score"] / 100
                                                                            for r in section_rows}}
    theirs = authors_v1(json.loads(file.read_text()))
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key


def test_v2_file_reads_as_the_authors_scored_it(tmp_path):
    rows = v2_dataset()
    columns = fx.v2_columns(rows, tie_at_top(fx.seeded_score(2), "Fac-0"))
    assert columns["results"][0] == 0.5  # the 2-way tie at the top
    columns["scores"] = [[[v] for v in s] if i == len(rows) - 1 else s  # a Ties score as [score] (upstream reads [0])
                         for i, s in enumerate(columns["scores"])]
    file = fx.write_scores_file(tmp_path / "rm2.json", columns, "org/rm2")
    scores = score_published(tmp_path, V2, rows, file, "org/rm2")
    data = pd.read_parquet(tmp_path / "rewardbench2.parquet")
    scored = metrics.join(data, pd.read_parquet(scores), "pub", scores)
    ours = {r["subset"]: r["score"] / 100 for r in metrics.v2_rows(scored, 20, 0)}
    document = json.loads(file.read_text())
    document["scores"] = [[v[0] if isinstance(v, list) else v for v in s] for s in document["scores"]]
    theirs = authors_v2(document)
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key


def test_records_as_save_to_hubs_list_branch_read_the_same(tmp_path):
    rows = v1_dataset(2)
    columns = fx.v1_columns(rows, fx.seeded_score(3))
    as_dict = fx.write_scores_file(tmp_path / "a.json", columns, "org/rm")
    records = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    as_records = tmp_path / "b.json"
    as_records.write_text("".join(json.dumps(r, indent=4, sort_keys=True) + "\n" for r in records))
    reader = reader_for("rewardbench")
    assert reader.read(as_records).rewards == reader.read(as_dict).rewards


# ----------------------------------------------------------------------------- alignment
def test_a_file_lacking_an_item_is_scored_on_the_rest_and_compared_on_the_common_prompts(tmp_path):
    rows = v1_dataset()
    extra = {**rows[0], "id": 99999}
    columns = fx.v1_columns([*rows[1:], extra], fx.seeded_score(4))
    file = fx.write_scores_file(tmp_path / "rm.json", columns, "org/rm")
    scores = score_published(tmp_path, V1, rows, file, "org/rm")
    meta = json.loads(scores.with_suffix(".meta.json").read_text())
    published = meta["adapter_details"]["published"]
    assert published["alignment"]["missing"] == {"count": 1, "first": ["100"]}
    assert published["alignment"]["extra"] == {"count": 1, "first": ["99999"]}
    assert published["alignment_words"] == ("matched 39 of 40 items (97.5 %); the file lacks 1 (id 100); this run "
                                            "lacks the file's 1 (id 99999)")
    assert meta["rows"] == 78 and len(pd.read_parquet(scores)) == 78
    data = pd.read_parquet(tmp_path / "rewardbench.parquet")
    scored = metrics.join(data, pd.read_parquet(scores), "pub", scores)
    assert sum(r["n"] for r in metrics.v1_rows(scored)[0]) == 39
    # a model run here holds all 40: the comparison is on the 39 both hold, and says so
    full = pd.DataFrame({"id": data["id"], "reward": np.arange(len(data), dtype=float)})
    kept, note = rb_compare.common_prompts(data, {"pub": pd.read_parquet(scores), "mine": full})
    assert kept["row_id"].nunique() == 39 and "100" not in set(kept["row_id"])
    assert note == ("compared on the 39 of 40 prompts every model holds (published results matched fewer: pub (39) "
                    "prompts).")


def test_fewer_than_90_percent_matched_stops_naming_both_sides_data(tmp_path):
    rows = v1_dataset()
    data_file = tmp_path / "rb.jsonl"
    data_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    file = fx.write_scores_file(tmp_path / "rm.json", fx.v1_columns(rows[5:], fx.seeded_score(5)), "org/rm")
    spec = published_spec("pub", "rewardbench", file, "org/rm")
    lines = problems(spec, benchmark("rewardbench"), {"source": "local", "path": str(data_file)}, str)
    assert lines == [f"model 'pub': RewardBench eval-set-scores file (save_to_hub) {file} by RewardBench prompt `id`: "
                     "matched 35 of 40 items (87.5 %); the file lacks 5 (id 100, 101, 102, 103, 104); at least 90 % "
                     f"of this run's items must match. This run's data: local file {data_file}; the file's: "
                     f"local:{file} (the file records no dataset revision)"]
    with pytest.raises(RmevalError, match=r"matched 35 of 40 items \(87.5 %\)"):
        score_published(tmp_path, V1, rows, file, "org/rm")


def test_a_prompt_with_other_completions_is_counted_as_different():
    ours = group_rows(["a#0", "a#1", "a#2", "b#0", "b#1"], reader_for("rewardbench2").item_of)
    theirs = {"a": ("a#0", "a#1", "a#2"), "b": ("b#0", "b#1", "b#2")}
    alignment = align(ours, theirs)
    assert alignment.matched == ("a",) and alignment.different == ("b",) and alignment.fraction == 0.5


# ----------------------------------------------------------------------------- bad files, one line each
@pytest.fixture
def v1_file(tmp_path) -> tuple[Path, dict]:
    columns = fx.v1_columns(v1_dataset(2), fx.seeded_score(6))
    return fx.write_scores_file(tmp_path / "rm.json", columns, "org/rm"), columns


def test_a_file_of_only_aggregates_is_named_as_such(tmp_path, v1_file):
    path = fx.write_aggregates_file(tmp_path / "eval-set" / "rm.json", v1_file[1], "org/rm")
    with pytest.raises(RmevalError) as error:
        reader_for("rewardbench").read(path)
    assert str(error.value) == (f"{path}: holds only aggregates (per-subset accuracies of 8 subsets: an `eval-set/` "
                                "file), no per-item scores; the per-prompt scores are in `eval-set-scores/` "
                                "(rewardbench/utils.py save_to_hub)")


def test_the_other_versions_file_is_named_with_the_benchmark_to_set(tmp_path, v1_file):
    with pytest.raises(RmevalError, match="a RewardBench results file .*, not RewardBench 2's; set `options.benchmark: "
                                          "rewardbench`"):
        reader_for("rewardbench2").read(v1_file[0])


def test_another_benchmarks_file_is_named(tmp_path):
    path = tmp_path / "judgebench.jsonl"  # JudgeBench-like records: pair_id, scores of its two responses
    path.write_text("\n".join(json.dumps({"pair_id": f"p{i}", "label": "A>B", "score_A": 1.0, "score_B": 0.0})
                              for i in range(3)))
    with pytest.raises(RmevalError, match=r"not a RewardBench eval-set-scores file: expected columns id, subset, "
                                          r"scores_chosen, scores_rejected; found label, pair_id, score_A, score_B"):
        reader_for("rewardbench").read(path)


def test_null_scores_are_no_per_item_scores(tmp_path, v1_file):
    document = json.loads(v1_file[0].read_text())
    document["scores_chosen"][1] = None  # run_rm.py's pairwise branch writes None
    v1_file[0].write_text(json.dumps(document))
    with pytest.raises(RmevalError, match=r"row 1 \(id '101'\): score chosen: no score \(null\)"):
        reader_for("rewardbench").read(v1_file[0])


def test_a_file_of_another_model_is_named(tmp_path, v1_file):
    spec = published_spec("pub", "rewardbench", v1_file[0], "org/other")
    assert problems(spec, benchmark("rewardbench"), {"source": "hf"}, str) == [
        f"model 'pub': {v1_file[0]} holds the results of 'org/rm', but options.model is 'org/other'"]


def test_a_changed_file_is_refused_by_its_pinned_sha256(tmp_path, v1_file):
    spec = published_spec("pub", "rewardbench", v1_file[0], "org/rm", sha256="0" * 64)
    (line,) = problems(spec, benchmark("rewardbench"), {"source": "hf"}, str)
    assert "but options.sha256 is 0000" in line and "not the pinned file" in line


# ----------------------------------------------------------------------------- entries
@pytest.mark.parametrize(("options", "message"), [
    ({"source": "github", "repo": "o/r", "commit": "main"}, "options.commit: 'main' is not a 40-hex commit"),
    ({"source": "hub", "repo": "o/r"}, "options.revision: missing; source hub needs it"),
    ({"source": "local", "commit": "a" * 40}, "options.commit: not with source local; remove it"),
])
def test_an_entry_names_what_its_source_lacks_or_refuses(options, message):
    spec = spec_from_mapping({"name": "p", "adapter": "published",
                              "options": {"benchmark": "rewardbench", "model": "o/m", "path": "f.json", **options}}, "t")
    with pytest.raises(RmevalError, match=message):
        entry_for(spec, benchmark("rewardbench"), "rewardbench.models")


def test_a_published_model_of_another_benchmark_is_refused_at_parse_time(tmp_path):
    spec = published_spec("pub", "rewardbench2", tmp_path / "f.json", "o/m")
    with pytest.raises(RmevalError, match="holds published rewardbench2 results; it cannot be scored on rewardbench"):
        entry_for(spec, benchmark("rewardbench"), "rewardbench.models")


def test_the_registry_ships_ten_published_classifiers_per_leaderboard(capsys):
    registry = load_registry(REPO_ROOT / "config" / "models.yaml")
    for bench, repo in (("rewardbench", "allenai/reward-bench-results"),
                        ("rewardbench2", "allenai/reward-bench-2-results")):
        entries = [s for s in registry.values() if s.adapter == "published" and s.options["benchmark"] == bench]
        assert len(entries) == 10
        for spec in entries:
            entry_for(spec, benchmark(bench), "models")
            assert spec.options["repo"] == repo and spec.options["source"] == "hub"
            assert spec.options["path"] == f"eval-set-scores/{spec.options['model']}.json"
    assert rmeval_main(["published", "rewardbench2"]) == 0
    out = capsys.readouterr().out
    assert "Skywork-Reward-V2-Llama-3.1-8B-rb2" in out and "10 published model(s)" in out


# ----------------------------------------------------------------------------- rmeval run --against: bad input
@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    from rmeval.run_command.launch import Launch

    (tmp_path / "results" / "tables").mkdir(parents=True)
    (tmp_path / "results" / "tables" / "leaderboard.csv").write_text("benchmark,model\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Launch, "run", lambda self: pytest.fail("Snakemake started on bad input"))
    return tmp_path


def refused(argv: list[str], run_dir: Path, capsys) -> list[str]:
    before = tree_state(run_dir / "results")
    assert rmeval_main(["run", *argv]) == 2
    assert tree_state(run_dir / "results") == before and not (run_dir / ".snakemake").exists()
    return capsys.readouterr().err.splitlines()


def test_against_bad_input_is_named_one_line_each_before_anything_is_written(run_dir, capsys, v1_file):
    earlier = run_dir / "earlier" / "results" / "scores" / "rewardbench" / "length-baseline"
    earlier.mkdir(parents=True)
    pd.DataFrame({"id": ["1#chosen"], "reward": [1.0]}).to_parquet(earlier / "rewardbench.parquet")
    (run_dir / "empty").mkdir()
    registry = run_dir / "registry.yaml"
    registry.write_text(
        "models:\n"  # added to the shipped registry (issue 46), whose length-baseline the run uses
        f"  pub-other: {{adapter: published, options: {{benchmark: rewardbench, model: org/other, source: local, "
        f"path: {v1_file[0]}}}}}\n"
        f"  pub-2: {{adapter: published, options: {{benchmark: rewardbench2, model: org/rm, source: local, "
        f"path: {v1_file[0]}}}}}\n")
    lines = refused(["--baseline", "length", "--benchmarks", "rewardbench", "--set", f"registry={registry}",
                     "--against", "pub-unknwn", "--against", "length-baseline", "--against", "pub-2",
                     "--against", "published:rewardbench/org/nope", "--against", "empty",
                     "--against", "earlier"], run_dir, capsys)
    assert lines[0] == "rmeval run: error: 6 problems:"
    assert lines[1:7] == [
        "  --against pub-unknwn: unknown name, and no such folder; did you mean 'pub-2'? `rmeval published` lists "
        "the registry's published models",
        "  --against length-baseline: registry model 'length-baseline' is run by this machine (adapter baseline), not "
        "published results; add it with --model length-baseline",
        "  --against pub-2: published rewardbench2 results, but this run's benchmarks are rewardbench; add "
        "--benchmarks rewardbench2",
        "  --against published:rewardbench/org/nope: no published model of 'rewardbench' named 'org/nope' in the "
        "registry (`rmeval published` lists them)",
        "  --against empty: empty: not an rmeval results folder (no scores/ in it, nor in its results/)",
        "  --against earlier: model 'length-baseline' has the name of this run's --baseline length; a folder's models "
        "keep their names: give this run's model another (--name)",
    ]
    # the file's own problem (another model's results), once the names are right
    lines = refused(["--baseline", "length", "--benchmarks", "rewardbench", "--set", f"registry={registry}",
                     "--against", "published:rewardbench/org/other"], run_dir, capsys)
    assert lines == [f"rmeval run: error: --against published:rewardbench/org/other: model 'pub-other': {v1_file[0]} "
                     "holds the results of 'org/rm', but options.model is 'org/other'", "Nothing was written or run."]


# ----------------------------------------------------------------------------- an earlier run's folder
def test_an_earlier_runs_other_data_and_formatting_are_named(tmp_path):
    """An earlier run's score file (its sidecar: the input it scored, the model input it built) read for this job:
    the rows whose texts differ from its prepared table, and the formatting that differs, are named."""
    from dataclasses import replace

    from rmeval.published.earlier import read_earlier
    from rmeval.run_command.against import Opponent, mismatch_notes
    from rmeval.tasks import ModelInput, load_pairs

    rows = v1_dataset(2)
    results = tmp_path / "earlier" / "results"
    (results / "rewardbench" / "data").mkdir(parents=True)
    prepare(pd.DataFrame(rows), V1, "earlier").to_parquet(results / "rewardbench/data/rewardbench.parquet")
    scores = results / "scores/rewardbench/ckpt-800"
    scores.mkdir(parents=True)
    table = pd.read_parquet(results / "rewardbench/data/rewardbench.parquet")
    pd.DataFrame({"id": table["id"], "reward": np.linspace(0, 1, len(table))}).to_parquet(scores / "rewardbench.parquet")
    (scores / "rewardbench.meta.json").write_text(json.dumps({
        "model": "ckpt-800", "input": "results/rewardbench/data/rewardbench.parquet", "input_sha256": "ab" * 32,
        "adapter_details": {"model_input": "text-pipeline", "max_length": 2048, "truncation_side": "left"}}))
    (results / "lock.yaml").write_text("models:\n  ckpt-800: {adapter: sequence-classification, path: ./ckpt-800, "
                                       "revision: local-sha256:0123456789abcdef, dtype: float32}\n")
    (results / "run_config.yaml").write_text("rewardbench: {enabled: true, source: hf, revision: abc123}\n")
    changed = [dict(row) for row in rows]
    changed[3]["chosen"] = "Another text."
    here = tmp_path / "here.parquet"
    prepare(pd.DataFrame(changed), V1, "here").to_parquet(here)
    pairs = replace(load_pairs(here, "pairs"), model_input=ModelInput("text-pipeline", 1024, "left"))
    read = read_earlier(results, "ckpt-800", pairs)
    assert read.benchmark == "rewardbench" and read.record["model_lock"]["revision"] == "local-sha256:0123456789abcdef"
    assert read.notes == (f"data revision differs: 1 matched rows have other texts in the earlier run (first "
                          f"'{changed[3]['id']}#chosen'); its data: results/rewardbench/data/rewardbench.parquet",
                          "input formatting differs from the earlier run: max_length 2048 there, 1024 here")
    opponent = Opponent("ckpt-800", {"options": {"path": str(results)}}, ("rewardbench",), "--against earlier", "")
    (note,) = mismatch_notes({"rewardbench": {"enabled": True, "source": "local", "path": "rb.jsonl"}}, [opponent])
    assert note.startswith("--against earlier: rewardbench: the earlier run differs: rewardbench.path: None there, "
                           "'rb.jsonl' here; rewardbench.revision: 'abc123' there, None here; rewardbench.source: 'hf' "
                           "there, 'local' here")


def test_a_github_file_is_fetched_once_at_its_commit_and_pinned_by_sha256(tmp_path, monkeypatch):
    """Real HTTP on 127.0.0.1 standing in for raw.githubusercontent.com: the download stage fetches
    `<repo>/<commit>/<path>` into the cache once; later reads (offline) take the cached file; the sha256 pins it."""
    import functools
    import hashlib
    import http.server
    import threading

    from rmeval.published.entry import CACHE_ENV, GITHUB_RAW_ENV, PublishedEntry

    commit = "0123456789abcdef0123456789abcdef01234567"
    served = tmp_path / "served" / "org" / "results" / commit / "outputs"
    served.mkdir(parents=True)
    columns = fx.v1_columns(v1_dataset(2), fx.seeded_score(7))
    file = fx.write_scores_file(served / "rm.json", columns, "org/rm")
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "served"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(GITHUB_RAW_ENV, f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    spec = spec_from_mapping({"name": "p", "adapter": "published", "options": {
        "benchmark": "rewardbench", "model": "org/rm", "source": "github", "repo": "org/results", "commit": commit,
        "path": "outputs/rm.json", "sha256": digest}}, "test")
    entry = PublishedEntry.from_spec(spec)
    assert entry.cached() is None
    try:
        fetched = entry.fetch()
    finally:
        server.shutdown()
    assert fetched == tmp_path / "cache" / "github" / "org/results" / commit / "outputs/rm.json"
    assert fetched.read_bytes() == file.read_bytes()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the score job: offline, the cached file serves
    assert entry.fetch() == fetched and problems(spec, benchmark("rewardbench"), {"source": "hf"}, str) == []
    fetched.write_text(fetched.read_text() + " ")  # another file at that path
    (line,) = problems(spec, benchmark("rewardbench"), {"source": "hf"}, str)
    assert f"but options.sha256 is {digest}: not the pinned file" in line


def test_the_tables_say_how_far_the_authors_leaderboard_page_is_and_why(tmp_path):
    """With `leaderboard` and its source in the entry, the table note sets the file's overall beside the page's."""
    from rmeval.benchmarks.rewardbench import tables

    rows = v1_dataset()
    file = fx.write_scores_file(tmp_path / "rm.json", fx.v1_columns(rows, fx.seeded_score(8)), "org/rm")
    prepared = tmp_path / "rewardbench.parquet"
    prepare(pd.DataFrame(rows), V1, "test").to_parquet(prepared)
    out = tmp_path / "scores" / "pub" / "rewardbench.parquet"
    spec = published_spec("pub", "rewardbench", file, "org/rm", leaderboard=95.1, leaderboard_source="the page, Jan")
    run_job(JobRequest(spec=spec, task="pairs", input=prepared, output=out, meta=out.with_suffix(".meta.json")))
    scored = metrics.join(pd.read_parquet(prepared), pd.read_parquet(out), "pub", out)
    sections = metrics.v1_rows(scored)[1]
    overall = next(r for r in sections if r["section"] == "Overall")
    tables.v1_sections_table(sections, tmp_path, "sections")
    note = (tmp_path / "sections.md").read_text()
    here = overall["score"]
    assert (f"pub: {here:.2f} here from its file, 95.1 on the authors' leaderboard page (the page, Jan): "
            f"{here - 95.1:+.2f} points, the page was not computed from this file as published") in note
    assert "within the page's rounding" in tables.page_difference({**overall, "leaderboard": round(here, 1)})
    with pytest.raises(RmevalError, match="give both"):
        entry_for(published_spec("p", "rewardbench", file, "org/rm", leaderboard=95.1), benchmark("rewardbench"), "m")


def test_a_hub_file_in_the_hf_cache_serves_offline_and_names_the_commit_it_resolved_to(tmp_path, monkeypatch):
    """The download stage's `hf_hub_download` leaves the file in the HF cache (datasets--<org>--<name>/snapshots/
    <commit>/<path>, refs/<revision>); a score job, offline, reads it there and records the commit."""
    from huggingface_hub import constants
    from rmeval.published.entry import PublishedEntry

    commit = "fedcba9876543210fedcba9876543210fedcba98"
    repo = tmp_path / "hub" / "datasets--allenai--reward-bench-results"
    target = repo / "snapshots" / commit / "eval-set-scores" / "org" / "rm.json"
    fx.write_scores_file(target, fx.v1_columns(v1_dataset(2), fx.seeded_score(9)), "org/rm")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = spec_from_mapping({"name": "p", "adapter": "published", "options": {
        "benchmark": "rewardbench", "model": "org/rm", "source": "hub", "repo": "allenai/reward-bench-results",
        "revision": "main", "path": "eval-set-scores/org/rm.json"}}, "test")
    entry = PublishedEntry.from_spec(spec)
    found = entry.fetch()
    assert found == target and entry.resolved(found) == commit
    assert problems(spec, benchmark("rewardbench"), {"source": "hf"}, str) == []
    (repo / "refs" / "main").write_text("0" * 40)  # main moved on: the pinned file is not in the cache
    assert entry.cached() is None
    with pytest.raises(RmevalError, match="is not downloaded yet and HF_HUB_OFFLINE is set"):
        entry.fetch()
