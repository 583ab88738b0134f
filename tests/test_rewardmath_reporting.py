"""RewardMATH reporting (issue 13, Seen 4, 8, 9, 10): human tables that compile, reward-free baselines checked
against the shared data, a figure whose labels do not overlap and whose panels carry the CIs they promise,
partial runs flagged and kept out of the correlation, and a plain-words summary section.

Expected numbers are computed here from the shared files directly, not through rmeval's baseline code.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
import random
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from rmeval.benchmarks import benchmark
from rmeval.benchmarks.rewardmath import figures, summary
from rmeval.benchmarks.rewardmath.agreement import rank_agreement, read_points
from rmeval.cli import main as rmeval
from rmeval.run_outputs.context import RunContext

PARTIAL_MODEL = "fake-rm"


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _pseudo_random(key: str) -> float:
    return random.Random(key).random()


@pytest.fixture(scope="module")
def tables(shared_data, tmp_path_factory) -> Path:
    """Official results + the prepared sample (2 RewardMATH problems) and all 447 RewardBench pairs, with a
    workflow model `fake-rm` scored on that sample (a partial run: 2 of 483 problems)."""
    root = tmp_path_factory.mktemp("rm-reporting")
    rm = shared_data / "rewardmath"
    data = root / "data"
    assert rmeval(["rewardmath-prepare", "--source", "local", "--path",
                   str(rm / "benchmark_samples" / "RewardMATH_direct.json"), "--rewardbench-source", "local",
                   "--rewardbench-path", str(rm / "rewardbench_math_prm_pairs.jsonl"), "--out", str(data)]) == 0
    scores = root / "scores" / PARTIAL_MODEL
    scores.mkdir(parents=True)
    for stem in ("algebra", "rewardbench_math_prm"):
        ids = pd.read_parquet(data / f"{stem}.parquet")["id"]
        pd.DataFrame({"id": ids, "reward": [_pseudo_random(i) for i in ids]}).to_parquet(scores / f"{stem}.parquet")
    out = root / "tables"
    assert rmeval(["rewardmath-metrics", "--official", str(rm / "results_rewardmath"), "--official-rewardbench",
                   str(rm / "results_rewardbench"), "--scores", str(root / "scores"), "--data", str(data),
                   "--subjects", "algebra", "--registry", "config/models.yaml", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def official_only(shared_data, tmp_path_factory) -> Path:
    """The 31 official RewardMATH results and their RewardBench files, nothing else."""
    out = tmp_path_factory.mktemp("rm-official")
    rm = shared_data / "rewardmath"
    assert rmeval(["rewardmath-metrics", "--official", str(rm / "results_rewardmath"), "--official-rewardbench",
                   str(rm / "results_rewardbench"), "--out", str(out)]) == 0
    return out


# --- Seen 4: human headers, registry names, right-aligned numbers, one precision ---------------------------

def test_tables_have_human_headers_and_model_names(tables):
    for stem in ("rewardmath_metrics", "rewardbench_math_prm_accuracy", "rewardmath_vs_rewardbench"):
        md = (tables / f"{stem}.md").read_text()
        tex = (tables / f"{stem}.tex").read_text()
        for raw in ("rewardmath_accuracy", "rewardbench_accuracy", "n_rewardmath", "ArmoRM_reward", "rewardbench_ArmoRM"):
            assert raw.replace("_", r"\_") not in tex, (stem, raw)
            assert raw not in md or raw in ("ArmoRM_reward", "rewardbench_ArmoRM"), (stem, raw)  # stems: own column
        assert not any(line.startswith(("| ArmoRM_reward", "| rewardbench_ArmoRM")) for line in md.splitlines())
        assert "| ArmoRM-Llama3-8B-v0.1 |" in md and "ArmoRM-Llama3-8B-v0.1 &" in tex
    side_md = (tables / "rewardmath_vs_rewardbench.md").read_text()
    assert "| Model | Kind | Aggregation | RewardMATH problems | RewardMATH accuracy (%) |" in side_md
    # The file stem stays in the CSV (and the Markdown's "Result file" column of the per-benchmark tables).
    side = {(r["setup"], r["aggregation"]): r for r in _csv(tables / "rewardmath_vs_rewardbench.csv")}
    assert side["ArmoRM_reward", "scalar"]["model"] == "ArmoRM-Llama3-8B-v0.1"
    assert side["grm_llama3_reward", "scalar"]["model"] == "GRM-llama3-8B-sftreg"  # the registry's name
    assert side["gpt4_pairwise_reward", "pairwise"]["model"] == "gpt-4-0125-preview"
    assert "| ArmoRM-Llama3-8B-v0.1 | ArmoRM_reward | official |" in (tables / "rewardmath_metrics.md").read_text()


def _tex_rows(tex: str) -> tuple[str, list[list[str]]]:
    spec = tex.split(r"\begin{tabular}{", 1)[1].split("}", 1)[0]
    body = tex.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    rows = [line.removesuffix(r" \\").split(" & ") for line in body.splitlines()
            if line.endswith(r"\\")]
    return spec, rows


def test_numbers_right_aligned_with_two_decimals(tables):
    tex = (tables / "rewardmath_vs_rewardbench.tex").read_text()
    spec, rows = _tex_rows(tex)
    # model, kind, aggregation | n, accuracy, MRR, n pairs, RewardBench accuracy (blank for LLM judges)
    assert spec == "lllrrrrr"
    assert any(row[-1] == "" for row in rows) and any(row[-1] != "" for row in rows)
    for row in rows:
        for cell in (row[4], row[5], row[7]):
            assert cell == "" or (len(cell.split(".")[1]) == 2 and float(cell) >= 0), row
    md = (tables / "rewardmath_vs_rewardbench.md").read_text().splitlines()
    assert md[3] == "|:---|:---|:---|---:|---:|---:|---:|---:|"


def test_latex_tables_compile(tables, tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (CI installs texlive-latex-recommended)")
    stems = ("rewardmath_metrics", "rewardbench_math_prm_accuracy", "rewardmath_vs_rewardbench")
    for stem in stems:
        shutil.copy(tables / f"{stem}.tex", tmp_path / f"{stem}.tex")
    inputs = "\n".join(rf"\input{{{stem}}}\clearpage" for stem in stems)
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage[margin=2cm]{geometry}\n"
                                      "\\usepackage{booktabs}\n\\begin{document}\n" + inputs + "\n\\end{document}\n")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert result.returncode == 0, result.stdout[-2000:]
    assert "Missing character" not in log and "! " not in log
    assert "Overfull \\hbox" not in log  # fits an A4/letter page with 2 cm margins
    assert (tmp_path / "doc.pdf").stat().st_size > 1000


# --- Seen 9: baselines, checked against the shared data ------------------------------------------------------

def _rewardbench_expected(shared_data: Path) -> dict[str, float]:
    pairs = [json.loads(line) for line in (shared_data / "rewardmath" / "rewardbench_math_prm_pairs.jsonl").open()]
    features = {"fewest steps": lambda s: -len(s), "most steps": len,
                "shortest solution": lambda s: -len("\n".join(s)), "longest solution": lambda s: len("\n".join(s))}
    expected = {name: round(100 * sum(f(p["chosen_steps"]) > f(p["rejected_steps"]) for p in pairs) / len(pairs), 2)
                for name, f in features.items()}
    expected["random"] = 50.0
    fewer = sum(len(p["chosen_steps"]) < len(p["rejected_steps"]) for p in pairs)
    assert (fewer, len(pairs)) == (415, 447)  # the count: why a random PRM scores ~94 % under prod
    return expected


def test_rewardbench_baselines_match_the_shared_pairs(tables, shared_data):
    expected = _rewardbench_expected(shared_data)
    rows = {r["setup"]: r for r in _csv(tables / "rewardbench_math_prm_accuracy.csv") if r["source"] == "baseline"}
    assert {name: float(rows[name]["accuracy"]) for name in expected} == expected
    assert expected["fewest steps"] == 92.84 and all(rows[name]["n"] == "447" for name in expected)
    md = (tables / "rewardbench_math_prm_accuracy.md").read_text()
    assert "| Fewest steps |  |  | baseline |  | 447 | 92.84 | 90." in md
    side = (tables / "rewardmath_vs_rewardbench.md").read_text()
    assert "| Fewest steps † | baseline |  | 2 |" in side and "| 447 | 92.84 |" in side


def test_rewardmath_baselines_match_the_shared_sample(tables, shared_data):
    rows = json.loads((shared_data / "rewardmath" / "benchmark_samples" / "RewardMATH_direct.json").read_text())
    problems: dict[str, dict] = {}
    for row in rows:
        entry = problems.setdefault(row["problem_id"], {"rejected": []})
        if row["solution_type"] == "chosen":
            entry["chosen"] = row["eval_solution"]
        else:
            entry["rejected"].append(row["eval_solution"])
    features = {"fewest steps": lambda s: -len(s), "most steps": len,
                "shortest solution": lambda s: -len("\n".join(s)), "longest solution": lambda s: len("\n".join(s))}
    got = {r["setup"]: r for r in _csv(tables / "rewardmath_metrics.csv") if r["source"] == "baseline"}
    for name, feature in features.items():
        correct, reciprocal = [], []
        for entry in problems.values():
            chosen = feature(entry["chosen"])
            rejected = [feature(steps) for steps in entry["rejected"]]
            correct.append(all(value < chosen for value in rejected))  # a tie fails
            reciprocal.append(1 / (1 + sum(value >= chosen for value in rejected)))
        expected = (round(100 * sum(correct) / len(correct), 2), round(100 * sum(reciprocal) / len(reciprocal), 2))
        assert (float(got[name]["accuracy"]), float(got[name]["mrr"])) == expected, name
        assert got[name]["n"] == "2" and got[name]["full_set"] == "no"
    harmonic = sum(1 / rank for rank in range(1, 11))
    assert (float(got["random"]["accuracy"]), float(got["random"]["mrr"])) == (10.0, round(10 * harmonic, 2))
    assert got["random"]["mrr"] == "29.29"


# --- Seen 8: figure labels, MRR error bars, partial runs out of the correlation ------------------------------

def _label_boxes(figure):
    from matplotlib.text import Text

    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    return renderer, [(axis, [Text.get_window_extent(text, renderer) for text in axis.texts]) for axis in figure.axes]


@pytest.mark.parametrize("which", ["official_only", "tables"])
def test_figure_labels_never_overlap(which, request):
    import matplotlib.pyplot as plt

    points = read_points(request.getfixturevalue(which) / "rewardmath_vs_rewardbench.csv")
    shown = figures.plotted_points(points, "prod")
    assert len([p for p in shown if not p.is_baseline]) == 13 + (which == "tables")
    figure = figures.build_figure(points, "prod")
    renderer, per_axis = _label_boxes(figure)
    for axis, boxes in per_axis:
        assert len(boxes) == len(shown)
        frame = axis.get_window_extent(renderer)
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), (a, b)
        for box in boxes:
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    plt.close(figure)


def test_mrr_panel_has_the_ci_error_bars(official_only):
    import matplotlib.pyplot as plt

    points = read_points(official_only / "rewardmath_vs_rewardbench.csv")
    figure = figures.build_figure(points, "prod")
    mrr_axis = figure.axes[1]
    vertical = set()
    for container in mrr_axis.containers:
        assert container.has_yerr and container.has_xerr
        for collection in container.lines[2]:
            for (x0, y0), (x1, y1) in collection.get_segments():
                if x0 == x1:
                    vertical.add((round(float(y0), 2), round(float(y1), 2)))
    expected = {(p.mrr_ci[0], p.mrr_ci[1]) for p in figures.plotted_points(points, "prod")}
    assert expected and all(not math.isnan(low) for low, _ in expected)
    assert expected <= vertical
    plt.close(figure)


def test_partial_runs_are_flagged_and_left_out_of_the_correlation(tables):
    side = {(r["setup"], r["aggregation"]): r for r in _csv(tables / "rewardmath_vs_rewardbench.csv")}
    fake = side[PARTIAL_MODEL, "scalar"]
    assert (fake["n_rewardmath"], fake["rewardmath_full_set"], fake["rewardbench_full_set"]) == ("2", "no", "yes")
    assert {r["full_set"] for r in _csv(tables / "rewardmath_metrics.csv") if r["setup"] == PARTIAL_MODEL} == {"no"}
    points = read_points(tables / "rewardmath_vs_rewardbench.csv")
    agreement = rank_agreement(points, "prod")
    assert (agreement.n, agreement.left_out) == (13, (PARTIAL_MODEL,))
    assert agreement.describe() == "Spearman ρ = 0.52, Kendall τ = 0.40 (n = 13 models; 1 partial run(s) left out)"
    md = (tables / "rewardmath_vs_rewardbench.md").read_text()
    assert f"| {PARTIAL_MODEL} † |" in md and "n = 13 models; 1 partial run(s) left out" in md
    assert f"{PARTIAL_MODEL} $^\\dagger$" in (tables / "rewardmath_vs_rewardbench.tex").read_text()
    import matplotlib.pyplot as plt

    figure = figures.build_figure(points, "prod")
    assert [axis.get_title() for axis in figure.axes[:2]] == [
        agreement.describe(), rank_agreement(points, "prod", "mrr").describe()]
    assert any(text.get_text() == f"{PARTIAL_MODEL} †" for text in figure.axes[0].texts)
    plt.close(figure)


# --- Seen 10: the RewardMATH section of the summary --------------------------------------------------------

def test_summary_section_in_plain_words(tables, tmp_path):
    out = tmp_path / "rewardmath.md"
    assert rmeval(["rewardmath-summary", "--table", str(tables / "rewardmath_vs_rewardbench.csv"),
                   "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("## RewardMATH")
    assert "**Best:** internlm2-7b-reward, accuracy 37.27 %" in text
    assert "**Worst:** prometheus-8x7b-v2.0 (direct), accuracy 0.21 %" in text
    assert "15 of 31 beat random guessing (10.00 %)" in text
    assert "fewer steps than the wrong one in 415 of 447 pairs" in text and "92.84 %" in text
    assert "not distinguishable from chance (Spearman ρ = 0.52, p = 0.067" in text and "n = 13 models" in text
    assert "**Partial runs**" in text and PARTIAL_MODEL in text

    # RewardMATH's section of the run's summary (rmeval run-summary) is the same text, read from the run's folder
    # at the run's PRM aggregation and alpha; at alpha = 0.1 the rank correlation (p = 0.067) is significant.
    run = tmp_path / "run"
    (run / "results" / "tables").mkdir(parents=True)
    shutil.copy(tables / "rewardmath_vs_rewardbench.csv", run / "results" / "tables")
    context = RunContext(benchmark("rewardmath"), run, 0.05, {"prm_aggregation": "prod"})
    assert summary.summary_section(context) == text
    loose = summary.summary_section(dataclasses.replace(context, alpha=0.1))
    assert "RewardBench math-prm agrees with RewardMATH only loosely (Spearman ρ = 0.52" in loose
    assert summary.render(read_points(tables / "rewardmath_vs_rewardbench.csv"), "prod", 0.05) == text
