"""Bad data input: a Kaggle-format snapshot with broken lines goes through the real `arxiv-fetch` and
`arxiv-select` commands and then the scoring engine; bad rewards from an injected forward pass; a score
file with missing rows at the statistics step. Every rejection names the file and line, or the row."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from drill_helpers import DRILL_GROUPS, kaggle_line, synthetic_papers
from rmeval.benchmarks.fairness.arxiv.cli_fetch import fetch_settings
from rmeval.benchmarks.fairness.arxiv.cli_select import select_settings
from rmeval.cli import main as rmeval_main
from rmeval.cli_settings import settings_json
from rmeval.errors import RmevalError
from rmeval.registry import spec_from_mapping
from rmeval.scoring.job import JobRequest, run_job
from workflow_helpers import tiny_model_entry, torch_threads_kept

TEX_TITLE = r"$\mathcal{O}(n^{2})$ \emph{vs.} $\Theta\left(\sqrt{n}\,\log n\right)$"
HUGE_ABSTRACT = ("We estimate the labour market response to a policy shock in a panel of countries. " * 1300)[:100_000]


def _bad_lines() -> list[tuple[str, bytes, str]]:
    """(bad input, raw line, text the warning must contain) for the economics group."""
    def line(**record: object) -> bytes:
        return json.dumps(record).encode()

    base = kaggle_line(synthetic_papers(1, seed=99)[1])
    return [
        ("line that is not JSON", b'{"id": "2499.00001", "title": "cut off here', "not JSON"),
        ("non-UTF-8 bytes", line(**{**base, "id": "2499.00002"}).replace(b'"title": "', b'"title": "\xff\xfe'),
         "not JSON"),
        ("missing id field", line(**{k: v for k, v in base.items() if k != "id"}), "no string 'id' field"),
        ("missing abstract field", line(**{k: v for k, v in {**base, "id": "2499.00004"}.items() if k != "abstract"}),
         "id 2499.00004 has an empty abstract"),
        ("missing title field", line(**{k: v for k, v in {**base, "id": "2499.00005"}.items() if k != "title"}),
         "id 2499.00005 has an empty title"),
        ("missing categories field",
         line(**{k: v for k, v in {**base, "id": "2499.00006"}.items() if k != "categories"}),
         "id 2499.00006 has no categories"),
        ("empty abstract", line(**{**base, "id": "2499.00007", "abstract": "  \n "}),
         "id 2499.00007 has an empty abstract"),
    ]


@pytest.fixture(scope="module")
def bad_snapshot_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("bad-snapshot")
    papers = synthetic_papers(10, seed=21)
    lines = [json.dumps(kaggle_line(p)).encode() for p in papers]
    economics = [p for p in papers if p.id.startswith("2402.")]
    duplicate = kaggle_line(economics[0])
    duplicate["abstract"] = "A later version of the same paper with another abstract."
    extra = [
        json.dumps(duplicate).encode(),
        json.dumps({**kaggle_line(economics[1]), "id": "2499.00010", "title": TEX_TITLE}).encode(),
        json.dumps({**kaggle_line(economics[2]), "id": "2499.00011", "title": "A very long abstract",
                    "abstract": HUGE_ABSTRACT}).encode(),
    ]
    bad = _bad_lines()
    # Bad lines between good ones: line numbers in the messages must point at them.
    body = lines[:5] + [raw for _, raw, _ in bad] + lines[5:] + extra
    snapshot = root / "snap.jsonl"
    snapshot.write_bytes(b"\n".join(body) + b"\n")
    line_of = {name: 6 + i for i, (name, _, _) in enumerate(bad)}
    arxiv = {"source": "snapshot", "snapshot": str(snapshot), "papers_per_group": 1000, "allow_fewer": "keep"}
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        for group, categories in DRILL_GROUPS.items():
            assert rmeval_main(["arxiv-fetch", "--group", group, "--categories", *categories, "--out-dir",
                                str(root / "arxiv"), "--settings", settings_json(fetch_settings(arxiv, None))]) == 0
        assert rmeval_main(["arxiv-select", "--groups", *DRILL_GROUPS, "--candidates-dir", str(root / "arxiv"),
                            "--out-dir", str(root / "data"), "--settings", settings_json(select_settings(arxiv))]) == 0
    return {"root": root, "stderr": stderr.getvalue(), "bad": bad, "line_of": line_of, "snapshot": snapshot,
            "economics": economics}


def test_broken_snapshot_lines_are_skipped_and_named(bad_snapshot_run: dict, drill) -> None:
    bad = bad_snapshot_run["bad"]
    drill("snapshot: broken lines", "input", "; ".join(name for name, _, _ in bad),
          "each skipped with a warning naming file and line; the run goes on; counts in the manifest",
          tried=len(bad))
    stderr, line_of = bad_snapshot_run["stderr"], bad_snapshot_run["line_of"]
    for name, _, expected in bad:
        needle = f"snap.jsonl line {line_of[name]}: "
        hits = [line for line in stderr.splitlines() if needle in line and expected in line]
        assert hits, f"{name}: no warning with {needle!r} and {expected!r} in:\n{stderr}"
    manifest = json.loads((bad_snapshot_run["root"] / "data" / "economics.manifest.json").read_text())
    counts = manifest["counts"]
    assert counts["malformed"] >= 3 and counts["empty_abstract"] >= 2 and counts["empty_title"] >= 1
    assert counts["no_categories"] >= 1


def test_duplicated_ids_are_kept_once_and_counted(bad_snapshot_run: dict, drill) -> None:
    drill("snapshot: duplicated id", "input", "the same arXiv id on two lines with different abstracts",
          "kept once (first version), counted as duplicate_ids in the manifest", outcome="accept")
    data = pd.read_parquet(bad_snapshot_run["root"] / "data" / "economics.parquet")
    first = bad_snapshot_run["economics"][0]
    assert (data["id"] == first.id).sum() == 1
    assert data.loc[data["id"] == first.id, "abstract"].item() == first.abstract
    manifest = json.loads((bad_snapshot_run["root"] / "data" / "economics.manifest.json").read_text())
    assert manifest["counts"]["duplicate_ids"] == 1


def test_duplicated_ids_in_a_scoring_input_are_rejected_naming_the_id(tmp_path: Path, drill) -> None:
    drill("scoring input: duplicated id", "input", "a data table with one id on two rows",
          "rejected before scoring; the message names the file and the id")
    path = tmp_path / "economics.parquet"
    pd.DataFrame({"id": ["2401.00001", "2401.00002", "2401.00001"], "title": ["A", "B", "C"],
                  "abstract": ["x.", "y.", "z."]}).to_parquet(path)
    from rmeval.tasks import load_pairs

    with pytest.raises(RmevalError, match=r"economics\.parquet: duplicate id '2401\.00001'"):
        load_pairs(path, "fairness")


def test_empty_abstract_in_a_scoring_input_is_rejected_naming_the_row(tmp_path: Path, drill) -> None:
    drill("scoring input: empty abstract", "input", "a data table row whose abstract is blank",
          "rejected before scoring; the message names the file and the row id")
    path = tmp_path / "economics.parquet"
    pd.DataFrame({"id": ["2401.00001", "2401.00002"], "title": ["A", "B"], "abstract": ["x.", "   "]}).to_parquet(path)
    from rmeval.tasks import load_pairs

    with pytest.raises(RmevalError, match=r"economics\.parquet: row id='2401\.00002' has an empty 'abstract'"):
        load_pairs(path, "fairness")


def _score(model_dir: Path, data: Path, output: Path) -> dict:
    spec = spec_from_mapping(tiny_model_entry("tiny", model_dir), where="drill")
    with torch_threads_kept():
        return run_job(JobRequest(spec=spec, task="fairness", input=data, output=output,
                                  meta=output.with_name(output.name.replace(".parquet", ".meta.json")), threads=1,
                                  max_batch_rows=8, checkpoint_every=4))


def test_tex_titles_and_100kb_abstracts_are_scored_truncated_and_flagged(
    bad_snapshot_run: dict, tiny_model_dir: Path, tmp_path: Path, drill
) -> None:
    drill("title made only of TeX", "input", f"title {TEX_TITLE!r}",
          "kept verbatim (TeX is a real title), scored with a finite reward", outcome="accept")
    drill("100 kB abstract", "input", f"an abstract of {len(HUGE_ABSTRACT)} characters",
          "scored: truncated to max_length and flagged truncated=True (and counted in the meta), no crash",
          outcome="accept")
    data = bad_snapshot_run["root"] / "data" / "economics.parquet"
    table = pd.read_parquet(data)
    assert table.loc[table["id"] == "2499.00010", "title"].item() == TEX_TITLE
    assert len(table.loc[table["id"] == "2499.00011", "abstract"].item()) > 99_000
    output = tmp_path / "scores" / "economics.parquet"
    meta = _score(tiny_model_dir, data, output)
    scores = pd.read_parquet(output).set_index("id")
    assert len(scores) == len(table) and np.isfinite(scores["reward"]).all()
    assert not scores.loc["2499.00010", "truncated"]
    assert scores.loc["2499.00011", "truncated"] and scores.loc["2499.00011", "n_tokens"] <= 512
    assert meta["n_truncated"] >= 1


@pytest.mark.parametrize("bad_value", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_non_finite_rewards_from_the_forward_pass_stop_the_job_naming_the_row(
    tiny_model_dir: Path, tmp_path: Path, bad_value: float, monkeypatch: pytest.MonkeyPatch, drill
) -> None:
    from transformers import LlamaForSequenceClassification

    drill(f"{bad_value} reward from the model", "fault",
          f"the model's forward pass returns {bad_value} logits for every row of its 3rd batch",
          "the job fails naming the first bad row id; no scores, meta or checkpoint are left")
    real_forward = LlamaForSequenceClassification.forward
    calls = []

    def poisoned_forward(self, *args, **kwargs):
        output = real_forward(self, *args, **kwargs)
        calls.append(kwargs["input_ids"].shape[0])
        if len(calls) == 3:
            output.logits = output.logits.clone().fill_(bad_value)
        return output

    monkeypatch.setattr(LlamaForSequenceClassification, "forward", poisoned_forward)
    papers = synthetic_papers(12, seed=4)
    data = tmp_path / "mathematics.parquet"
    pd.DataFrame({"id": [p.id for p in papers], "title": [p.title for p in papers],
                  "abstract": [p.abstract for p in papers]}).to_parquet(data)
    output = tmp_path / "scores" / "mathematics.parquet"
    with pytest.raises(RmevalError, match=r"non-finite reward \((nan|inf)\) for row id='24\d\d\.\d{5}'") as raised:
        _score(tiny_model_dir, data, output)
    assert "no scores were written" in str(raised.value)
    assert len(calls) == 3
    left = sorted(p.name for p in output.parent.rglob("*")) if output.parent.exists() else []
    assert left == [], f"files left behind: {left}"


def _stats(scores: Path, data_dir: Path, out: Path) -> int:
    return rmeval_main(["fairness-stats", "--scores", str(scores), "--out", str(out), "--manifests", str(data_dir),
                        "--reference-model", "", "--bootstrap", "100", "--permutations", "100"])


def test_a_score_file_with_missing_rows_is_rejected_naming_it(tmp_path: Path, drill,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    drill("score file with missing rows", "input",
          "results/scores/m2/economics.parquet lacks 3 of the group's 30 rows",
          "fairness-stats rejects it, naming the score file and the row counts; no tables written")
    rng = np.random.default_rng(0)
    data_dir, scores = tmp_path / "data", tmp_path / "scores"
    data_dir.mkdir()
    for group in ("economics", "mathematics"):
        ids = [f"2401.{i:05d}" for i in range(30)]
        (data_dir / f"{group}.manifest.json").write_text(json.dumps({"group": group, "output": {"rows": 30}}))
        for model in ("m1", "m2"):
            kept = ids[:27] if (model, group) == ("m2", "economics") else ids
            (scores / model).mkdir(parents=True, exist_ok=True)
            pd.DataFrame({"id": kept, "reward": rng.normal(size=len(kept)), "n_tokens": 100}).to_parquet(
                scores / model / f"{group}.parquet")
    # Complete files pass the same check (every model holds the manifest's 30 rows).
    complete = tmp_path / "complete"
    for model in ("m1", "m2"):
        (complete / model).mkdir(parents=True)
        for group in ("economics", "mathematics"):
            (complete / model / f"{group}.parquet").write_bytes((scores / "m1" / f"{group}.parquet").read_bytes())
    assert _stats(complete, data_dir, tmp_path / "complete-tables") == 0
    capsys.readouterr()
    out = tmp_path / "tables"
    status = _stats(scores, data_dir, out)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "m2/economics.parquet" in err and "27" in err and "30" in err, err
    assert not (out / "table1_anova.csv").exists()
