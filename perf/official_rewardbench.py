"""rmeval's RewardBench 1 / 2 against the official pipeline, run unchanged, offline, on CPU.

The official side is the `rewardbench` package 0.1.4 (it pins transformers 4.51) installed in its own virtual
environment, never rmeval's: e.g.
    python -m venv --system-site-packages /tmp/rbvenv
    /tmp/rbvenv/bin/pip install rewardbench==0.1.4 transformers==4.51.0 fschat trl==0.17.0 --no-deps
    /tmp/rbvenv/bin/pip install "tokenizers>=0.21,<0.22" "huggingface_hub<1.0" datasets==3.6.0 sentencepiece shortuuid
Its `scripts/run_rm.py` and `scripts/run_v2.py` read the datasets from `allenai/reward-bench` /
`allenai/reward-bench-2` relative to the working directory, which this script lays out like the Hub repositories
(`data/filtered-*.parquet`, `data/test-*.parquet`). One shim, outside the scripts: `RewardBenchPipeline` moves its
batch `.to("cuda")`; on a machine without CUDA a `sitecustomize` maps that move to the CPU.

Both sides score one tiny classifier (`rmeval tiny-model`) on the same files (default: the `.test/rewardbench`
fixtures, plus a RewardBench 2 Focus prompt whose chosen text recurs twice among its rejected ones and a long
row of each version that a short max_length truncates), three ways: the defaults; rmeval's token budget at 256;
a max_length of 128 on both sides. rmeval runs its own commands (prepare, score with the planner's settings,
metrics, export). Compared: every reward, each pair's / prompt's result, every subset, the v1 sections and
overall (the official `calculate_scores_per_section`), the v2 overall (mean of the six subsets) and the exports.

Usage: python perf/official_rewardbench.py [--official-python /tmp/rbvenv/bin/python] [--work DIR]
(or RMEVAL_REWARDBENCH_PYTHON). Without the official package it prints why and exits 0. The last stdout line is
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / ".test" / "rewardbench" / "data"
SHIM = '''
import torch
if not torch.cuda.is_available():
    from transformers.tokenization_utils_base import BatchEncoding
    _to = BatchEncoding.to
    BatchEncoding.to = lambda self, device, **kw: _to(self, "cpu" if str(device).startswith("cuda") else device, **kw)
'''
SECTIONS_SNIPPET = '''
import json, sys
from rewardbench.constants import EXAMPLE_COUNTS, SUBSET_MAPPING
from rewardbench.utils import calculate_scores_per_section
print(json.dumps(calculate_scores_per_section(EXAMPLE_COUNTS, SUBSET_MAPPING, json.load(open(sys.argv[1])))))
'''
MODES = {"defaults": {"max_length": 2048, "budget": None}, "budget-256": {"max_length": 2048, "budget": 256},
         "max-length-128": {"max_length": 128, "budget": None}}
TOLERANCE = 2e-5  # rewards: fp32 on two transformers versions and two batchings (CONTRIBUTING.md)


def official_python(given: str | None) -> tuple[str | None, str]:
    python = given or os.environ.get("RMEVAL_REWARDBENCH_PYTHON")
    if not python:
        return None, "no official environment: pass --official-python or set RMEVAL_REWARDBENCH_PYTHON"
    probe = subprocess.run([python, "-c", "import rewardbench, transformers; print(rewardbench.__version__, "
                            "transformers.__version__)"], capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"{python} cannot import rewardbench: {probe.stderr.strip().splitlines()[-1:]}"
    return python, probe.stdout.strip()


def write_inputs(work: Path) -> dict[str, Path]:
    """The two datasets (rmeval's local files and the Hub layout the official scripts read)."""
    v1 = [json.loads(line) for line in (FIXTURES / "rewardbench.jsonl").read_text().splitlines()]
    v2 = [json.loads(line) for line in (FIXTURES / "rewardbench2.jsonl").read_text().splitlines()]
    long_text = " ".join(["The reward model reads this long answer about tensor networks and markets."] * 20)
    first = dict(v1[0])
    v1.append({**first, "id": 90001, "chosen": long_text, "rejected": long_text[::-1]})
    focus = next(row for row in v2 if row["subset"] == "Focus")
    v2.append({**focus, "id": "focus-copies",
               "rejected": [focus["chosen"][0], focus["chosen"][0], *focus["rejected"][2:]]})
    v2.append({**focus, "id": "long-row", "chosen": [long_text], "rejected": [long_text[:200], *focus["rejected"][1:]]})
    files = {}
    for name, rows, hub, split in (("rewardbench", v1, "reward-bench", "filtered"),
                                   ("rewardbench2", v2, "reward-bench-2", "test")):
        local = work / f"{name}.jsonl"
        local.write_text("".join(json.dumps(row) + "\n" for row in rows))
        layout = work / "allenai" / hub / "data"
        layout.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(layout / f"{split}-00000-of-00001.parquet")
        files[name] = local
    return files


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv[:4])} ...\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return result.stdout


def loadable_by_transformers_4(model: Path) -> None:
    """transformers 5 saves `tokenizer_class: TokenizersBackend` and `extra_special_tokens` as a list, which 4.51
    cannot read; the same tokenizer.json under the class and keys 4.51 knows (rmeval reads either)."""
    path = model / "tokenizer_config.json"
    config = json.loads(path.read_text())
    if config.get("tokenizer_class") == "TokenizersBackend":
        config["tokenizer_class"] = "PreTrainedTokenizerFast"
    if isinstance(config.get("extra_special_tokens"), list):
        config["additional_special_tokens"] = config.pop("extra_special_tokens")
    config.pop("backend", None)
    # what a Llama tokenizer declares (4.51's PreTrainedTokenizerFast would add token_type_ids, which the pipeline
    # passes on to the model)
    config.setdefault("model_input_names", ["input_ids", "attention_mask"])
    path.write_text(json.dumps(config, indent=2) + "\n")


def printed_results(stdout: str, scores: dict[str, Any]) -> dict[str, Any]:
    """results_grouped from run_v2.py's printed lines: `<subset>: n/N (score)` and `Ties: Overall score <score>`."""
    grouped: dict[str, Any] = {"model": scores["model"], "model_type": scores["model_type"],
                               "chat_template": scores["chat_template"]}
    subsets = set(scores["subset"])
    for line in stdout.splitlines():
        name, _, rest = line.partition(": ")
        if name not in subsets:
            continue
        if rest.startswith("Overall score "):
            grouped[name] = float(rest.removeprefix("Overall score "))
        elif rest.endswith(")") and "(" in rest:
            grouped[name] = float(rest.rsplit("(", 1)[1].rstrip(")"))
    return grouped


def run_official(python: str, work: Path, model: str, max_length: int) -> dict[str, Any]:
    shim = work / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(SHIM)
    env = {**os.environ, "PYTHONPATH": str(shim), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""}
    scripts = Path(run([python, "-c", "import scripts, os; print(os.path.dirname(scripts.__file__))"], work,
                       env).strip())
    common = ["--model", model, "--torch_dtype", "float32", "--do_not_save", "--disable_beaker_save",
              "--max_length", str(max_length)]
    out: dict[str, Any] = {}
    for name, script, extra in (("rewardbench", "run_rm.py", ["--not_quantized"]), ("rewardbench2", "run_v2.py", [])):
        printed = run([python, str(scripts / script), *common, *extra], work, env)
        scores = json.loads((work / "results" / "eval-set-scores" / f"{model}.json").read_text())
        grouped_file = work / "results" / "eval-set" / f"{model}.json"
        # run_v2.py saves its results_grouped only when it uploads (not with --do_not_save); it prints each one
        grouped = json.loads(grouped_file.read_text()) if grouped_file.is_file() else printed_results(printed, scores)
        out[name] = {"grouped": grouped, "scores": scores}
        if name == "rewardbench":
            subsets = work / "v1-subsets.json"
            subsets.write_text(json.dumps(grouped))
            out[name]["sections"] = json.loads(run([python, "-c", SECTIONS_SNIPPET, str(subsets)], work, env))
        (work / "results").rename(work / f"results-{name}-{max_length}")
    return out


def run_rmeval(work: Path, files: dict[str, Path], model: Path, mode: dict[str, Any], tag: str) -> dict[str, Any]:
    from rmeval.benchmarks.rewardbench.plan import score_settings
    from rmeval.benchmarks.rewardbench.versions import VERSIONS
    from rmeval.registry import spec_from_mapping

    spec = spec_from_mapping({"name": "tiny", "path": str(model), "dtype": "float32", "resources": {"gpu": 0}},
                             where="official_rewardbench").to_json()
    rmeval = [sys.executable, "-m", "rmeval"]
    root = work / f"rmeval-{tag}"
    out: dict[str, Any] = {}
    for name, path in files.items():
        version = VERSIONS[name]
        data = root / "data" / f"{name}.parquet"
        run([*rmeval, "rewardbench-prepare", "--version", name, "--source", "local", "--path", str(path),
             "--out", str(data)], work)
        settings = {**score_settings(version, {"model_input": "official", "max_length": mode["max_length"]}),
                    **({"token_budget": mode["budget"]} if mode["budget"] else {})}
        scores = root / "scores" / "tiny" / f"{name}.parquet"
        run([*rmeval, "score", "--spec", spec, "--task", "pairs", "--input", str(data), "--output", str(scores),
             "--no-server", "--threads", "2", "--progress-every", "0", "--settings", json.dumps(settings)], work)
        tables = root / "tables"
        run([*rmeval, "rewardbench-metrics", "--version", name, "--data", str(data), "--scores", str(root / "scores"),
             "--models", "tiny", "--out", str(tables), "--bootstrap", "0"], work)
        export = root / "official" / f"{name}.json"
        run([*rmeval, "rewardbench-export", "--version", name, "--model", "tiny", "--data", str(data),
             "--scores", str(scores), "--out", str(export)], work)
        out[name] = {"data": pd.read_parquet(data), "scores": pd.read_parquet(scores).set_index("id"),
                     "tables": tables, "export": json.loads(export.read_text())}
    return out


def _first(value: Any) -> float:
    return float(np.asarray(value, dtype=np.float64).reshape(-1)[0])


def compare(official: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    # v1: per pair
    o1, r1 = official["rewardbench"], ours["rewardbench"]
    rewards = r1["scores"]["reward"]
    deltas, results_differ = [], 0
    for row_id, chosen, rejected, result in zip(o1["scores"]["id"], o1["scores"]["scores_chosen"],
                                                o1["scores"]["scores_rejected"], o1["scores"]["results"], strict=True):
        ours_chosen, ours_rejected = rewards[f"{row_id}#chosen"], rewards[f"{row_id}#rejected"]
        deltas += [abs(ours_chosen - _first(chosen)), abs(ours_rejected - _first(rejected))]
        results_differ += int((1 if ours_chosen > ours_rejected else 0) != int(result))
    table = pd.read_csv(r1["tables"] / "rewardbench_scores.csv")
    mine = {row["subset"]: row["accuracy"] / 100 for _, row in table[table["model"] == "tiny"].iterrows()}
    theirs = {k: v for k, v in o1["grouped"].items() if k not in ("model", "model_type", "chat_template")}
    sections = pd.read_csv(r1["tables"] / "rewardbench_sections.csv")
    my_sections = {row["section"]: row["score"] / 100 for _, row in sections[sections["model"] == "tiny"].iterrows()}
    their_sections = {("Overall" if k == "overall" else k): v for k, v in o1["sections"].items()}
    report["rewardbench"] = {
        "completions": len(deltas), "max_reward_diff": max(deltas), "pair_results_differing": results_differ,
        "subset_max_diff": max(abs(mine[k] - theirs[k]) for k in theirs),
        "sections_max_diff": max(abs(my_sections[k] - v) for k, v in their_sections.items() if k in my_sections),
        "export_subsets_equal": all(abs(r1["export"][k] - v) < 1e-12 for k, v in theirs.items()),
        "export_chat_template": [r1["export"]["chat_template"], o1["grouped"]["chat_template"]],
    }
    # v2: per prompt, each completion in chosen + rejected order
    o2, r2 = official["rewardbench2"], ours["rewardbench2"]
    rewards = r2["scores"]["reward"]
    deltas, results_differ = [], 0
    data = r2["data"]
    for row_id, subset, scores, result in zip(o2["scores"]["id"], o2["scores"]["subset"], o2["scores"]["scores"],
                                              o2["scores"]["results"], strict=True):
        ids = data[data["row_id"] == str(row_id)].sort_values("k")["id"]
        mine_scores = [rewards[i] for i in ids]
        deltas += [abs(m - _first(s)) for m, s in zip(mine_scores, scores, strict=True)]
        top = max(mine_scores)
        my_result = (1 / sum(s == top for s in mine_scores)) if mine_scores[0] == top else 0.0
        if subset != "Ties":  # (its per-prompt `results` are the Ties score's own terms)
            results_differ += int(abs(my_result - float(result)) > 1e-12)
    table = pd.read_csv(r2["tables"] / "rewardbench2_scores.csv")
    mine = {row["subset"]: row["score"] / 100 for _, row in table[table["model"] == "tiny"].iterrows()}
    theirs = {k: v for k, v in o2["grouped"].items() if k not in ("model", "model_type", "chat_template")}
    report["rewardbench2"] = {
        "completions": len(deltas), "max_reward_diff": max(deltas), "prompt_results_differing": results_differ,
        "subset_max_diff": max(abs(mine[k] - theirs[k]) for k in theirs),
        "overall": [mine["Overall"], float(np.mean(list(theirs.values())))],
        "export_subsets_equal": all(abs(r2["export"][k] - v) < 1e-12 for k, v in theirs.items()),
        "export_chat_template": [r2["export"]["chat_template"], o2["grouped"]["chat_template"]],
    }
    report["agree"] = bool(
        all(report[n]["max_reward_diff"] <= TOLERANCE and report[n]["subset_max_diff"] < 1e-12
            and report[n]["export_subsets_equal"] and report[n]["export_chat_template"][0]
            == report[n]["export_chat_template"][1] for n in ("rewardbench", "rewardbench2"))
        and report["rewardbench"]["pair_results_differing"] == 0 and report["rewardbench"]["sections_max_diff"] < 1e-12
        and report["rewardbench2"]["prompt_results_differing"] == 0
        and abs(report["rewardbench2"]["overall"][0] - report["rewardbench2"]["overall"][1]) < 1e-12)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official-python", help="python of the environment with rewardbench 0.1.4")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    args = parser.parse_args(argv)
    python, found = official_python(args.official_python)
    if python is None:
        print(f"official_rewardbench: skipped: {found}")
        print(json.dumps({"benchmark": "official_rewardbench", "skipped": found}))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="rmeval-official-rb-"))
    work.mkdir(parents=True, exist_ok=True)
    files = write_inputs(work)
    run([sys.executable, "-m", "rmeval", "tiny-model", str(work / "models" / "tiny")], work)
    loadable_by_transformers_4(work / "models" / "tiny")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _runs

    report: dict[str, Any] = {"benchmark": "official_rewardbench", "official": found, "cpu": _runs.cpu_name(),
                              "work": str(work), "modes": {}}
    official_runs: dict[int, dict[str, Any]] = {}
    for tag, mode in MODES.items():
        if mode["max_length"] not in official_runs:
            official_runs[mode["max_length"]] = run_official(python, work, "models/tiny", mode["max_length"])
        ours = run_rmeval(work, files, work / "models" / "tiny", mode, tag)
        report["modes"][tag] = compare(official_runs[mode["max_length"]], ours)
        print(f"official_rewardbench: {tag}: {json.dumps(report['modes'][tag])}", file=sys.stderr, flush=True)
    report["agree"] = all(mode["agree"] for mode in report["modes"].values())
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
