"""Paste-ready tables: every .tex a stats run writes compiles with pdflatex + booktabs, p-values are in math
mode, numbers keep one precision per column (the paper's: F and NMGD 2 decimals, r 3), and the notes name the
data source in one short sentence (issue 13, "Seen" item 4)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from latex_helpers import compile_tables, needs_pdflatex
from rmeval.benchmarks.fairness.stats.tables import column_for
from rmeval.cli import main as rmeval_main
from test_stats_cli import SNAPSHOT_SHA
from test_stats_reproduction import EIGHT_GROUPS, write_eight_group_scores, write_rewardmath_metrics

P_COLUMNS = {"p_value", "welch_p", "kruskal_p", "perm_p_value", "group_p", "length_p", "p_adj"}


def _manifests(folder: Path) -> Path:
    """Manifests as arxiv-select writes them for the API source (rmeval/benchmarks/fairness/arxiv/select.py, arxiv/api.py)."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    for index, group in enumerate(EIGHT_GROUPS):
        (folder / f"{group}.manifest.json").write_text(json.dumps({
            "group": group,
            "source": {"kind": "api", "base_url": "http://export.arxiv.org/api/query", "query": "cat:cs.*",
                       "date_from": "2024-01-01", "date_to": "2024-06-30", "cache_dir": "/home/me/.cache/rmeval"},
            "date": {"fetched_at": "2026-11-30T09:15:00+00:00", "selected_at": "2026-11-30T09:20:00+00:00"},
            "seed": 0,
            "settings": {"source": "api", "seed": 0, "date_from": "2024-01-01", "date_to": "2024-06-30"},
            "counts": {"eligible": 400, "sampled": 25},
            "output": {"path": f"/home/me/rmeval/results/data/{group}.parquet", "rows": 25,
                       "sha256": SNAPSHOT_SHA, "content_sha256": f"{index:02d}" * 32},
        }))
    return folder


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("latex")
    scores_root = root / "first"
    scores = write_eight_group_scores(scores_root / "scores")
    out = scores_root / "results" / "tables"  # where the run-level commands read them (run_eight_group_stats)
    manifests = _manifests(root / "data")
    assert rmeval_main(["fairness-stats", "--scores", str(scores), "--out", str(out),
                        "--bootstrap", "100", "--permutations", "100", "--manifests", str(manifests),
                        "--registry", str(Path(__file__).resolve().parents[1] / "config/models.yaml"),
                        "--ranks", '{"my-rm": null}']) == 0
    write_rewardmath_metrics(out / "rewardmath_metrics.csv")
    assert rmeval_main(["run-reproduction", "--root", str(scores_root), "--benchmarks", "fairness", "rewardmath"]) == 0
    (out / "rewardmath_metrics.csv").unlink()  # RewardMATH's, not a table of this folder's kind
    return out


@needs_pdflatex
@pytest.mark.slow(reason="a real pdflatex run over every table the fixture run wrote")
def test_every_tex_table_compiles_with_pdflatex_and_booktabs(tables: Path, tmp_path: Path) -> None:
    tex_files = sorted(tables.glob("*.tex"))
    assert len(tex_files) >= 18  # 17 fairness tables + reproduction
    pdf = compile_tables(tex_files, tmp_path / "latex")
    assert pdf.stat().st_size > 10_000
    log = pdf.with_suffix(".log").read_text(errors="replace")
    assert "Missing character" not in log  # e.g. a glyph the default (OT1) fonts lack


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The CSV's columns as .md / .tex show them: an all-empty `note` column is left out."""
    return frame.drop(columns="note") if "note" in frame.columns and frame["note"].isna().all() else frame


def _markdown_cells(path: Path) -> tuple[list[str], list[list[str]]]:
    lines = [line for line in path.read_text().splitlines() if line.startswith("| ")]
    split = [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    return split[0], split[1:]


def test_latex_p_values_are_in_math_mode_and_numbers_right_aligned(tables: Path) -> None:
    latex = (tables / "table1_anova.tex").read_text()
    assert "\\begin{tabular}{lrrrr}" in latex and "Model & $F$ & $p$ & $q$ & RewardBench Rank" in latex
    for stem in ("table1_anova", "table5_robust_anova", "table7_gap", "tukey_pairs"):
        frame = _shown(pd.read_csv(tables / f"{stem}.csv"))
        body = (tables / f"{stem}.tex").read_text().split("\\midrule\n")[1].split("\\bottomrule")[0]
        rows = [line.removesuffix(" \\\\").split(" & ") for line in body.strip().splitlines()]
        for index, column in enumerate(frame.columns):
            cells = [row[index] for row in rows]
            if column in P_COLUMNS:
                assert all(re.fullmatch(r"\$(<10\^\{-300\}|\d\.\d{2}\\times10\^\{-\d+\}|\d\.\d{3})\$", c)
                           or c == "--" for c in cells), (stem, column, cells)
            assert "<" not in "".join(c for c in cells if not c.startswith("$")), (stem, column)
    assert "$-" in (tables / "table3_nmgd.tex").read_text() or "$-" in (tables / "tukey_pairs.tex").read_text()


def test_numbers_keep_the_papers_precision_and_one_precision_per_column(tables: Path) -> None:
    for csv in sorted(tables.glob("*.csv")):
        if csv.stem == "reproduction":
            continue  # one statistic per row there: precision is per row, checked in test_stats_reproduction
        frame = _shown(pd.read_csv(csv))
        headers, rows = _markdown_cells(csv.with_suffix(".md"))
        assert len(headers) == len(frame.columns), csv
        for index, key in enumerate(frame.columns):
            column = column_for(key, frame)
            if column.kind != "fixed":
                continue
            cells = [row[index] for row in rows if row[index] not in {"", "inf", "-inf"}]
            assert all(re.fullmatch(rf"-?\d+\.\d{{{column.decimals}}}", c) for c in cells), (csv.stem, key, cells)
    headers, rows = _markdown_cells(tables / "table1_anova.md")
    assert headers == ["Model", "F", "p", "q", "RewardBench Rank"]
    assert all(re.fullmatch(r"\d+\.\d{2}", row[1]) for row in rows)  # F: 2 decimals, as in the paper
    headers, rows = _markdown_cells(tables / "table4_pearson.md")
    assert headers[1] == "Pearson r" and all(re.fullmatch(r"-?\d\.\d{3}", row[1]) for row in rows)
    headers, _ = _markdown_cells(tables / "table5_robust_anova.md")
    assert "welch_f" not in headers and "Welch F" in headers  # human headers, never raw CSV names


def test_notes_name_the_source_in_one_short_sentence(tables: Path) -> None:
    expected = ("Data: arXiv API, papers from 2024-01-01 to 2024-06-30, fetched 2026-11-30, sample ")
    for path in [*tables.glob("*.md"), *tables.glob("*.tex")]:
        if path.stem in {"provenance", "reproduction"}:
            continue
        text = path.read_text()
        assert expected in text, path
        assert "{'" not in text and "/home/me" not in text, path  # no dict repr, no local path
        assert not re.search(r"[0-9a-f]{64}", text), path  # no full sha256 in a table
    provenance = (tables / "provenance.md").read_text()
    assert SNAPSHOT_SHA in provenance and "http://export.arxiv.org/api/query" in provenance
    assert "## Score files" in provenance and "ArmoRM-Llama3-8B-v0.1" in provenance
