"""RMB at full size on CPU: prepare, score (a tiny model, per 1,000 texts) and metrics, on synthetic data written in
the official RMB_dataset layout with the published counts and shapes.

The data: 49 scenario files per set (37 of helpfulness, 12 of harmlessness), 14,543 pairwise items and 3,786
best-of-N items (2-6 losers, in the published proportions), conversations of 1, 3 or 5 turns (86 / 10 / 4 %),
answers of a few hundred to a few thousand characters; responses repeat across the two sets as in the published
data (about 18,400 distinct texts of about 41,600 responses), so prepare's deduplication is exercised at scale.
The texts are random words: the cost, not the rewards, is what is measured.

Stages, each a subprocess (`rmeval rmb-prepare`, `rmeval score --task rmb`, `rmeval rmb-metrics`), wall seconds:
  prepare: the full folder -> distinct texts, items, manifest;
  score: the first --texts distinct texts with a tiny model (`rmeval tiny-model`, seed 0), reported per 1,000 texts
         (model loading included once; --texts all scores every one);
  metrics: the full tables from a score file for every text (the scored rewards, the rest filled by length).
Usage: python perf/bench_rmb.py [--texts 1000] [--threads 1] [--workdir DIR] [--quick]
The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _runs  # noqa: E402 - the benchmark helpers live beside this script

PAIRWISE_ITEMS, BON_ITEMS = 14_543, 3_786
HELPFULNESS, HARMLESSNESS = 37, 12
LOSERS = {2: 2878, 3: 712, 4: 165, 5: 24, 6: 7}  # published BoN loser-list sizes
TURNS = {1: 86, 3: 10, 5: 4}  # percent of conversations
WORDS = ("alpha beta gamma delta answer reason model river tea lock code data table result value sample step "
         "because however therefore first second finally").split()


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def write_layout(root: Path, scale: float, seed: int = 0) -> None:
    """Pairwise and BoN files; each BoN item reuses a pairwise item's conversation and answers (as published)."""
    rng = random.Random(seed)
    scenarios = [f"Helpfulness/Area{i // 4}/Scenario {i}" for i in range(HELPFULNESS)] + \
                [f"Harmlessness/S{i + 1}" for i in range(HARMLESSNESS)]
    pool: list[tuple[list[dict], list[str], str]] = []
    pairwise: dict[str, list[dict]] = {s: [] for s in scenarios}
    for index in range(int(PAIRWISE_ITEMS * scale)):
        scenario = scenarios[index % len(scenarios)]
        n_turns = rng.choices(list(TURNS), weights=list(TURNS.values()))[0]
        turns = [{"role": "user" if t % 2 == 0 else "assistant", "content": words(rng, 10, 120),
                  "language": "English"} for t in range(n_turns)]
        answers = [words(rng, 40, 500) for _ in range(2)]
        pool.append((turns, answers, scenario))
        pairwise[scenario].append({"pair_uid": str(index), "conversation_input": turns,
                                   "chosen": {"llm_name": "a", "answer": answers[0]},
                                   "reject": {"llm_name": "b", "answer": answers[1]},
                                   "category_path": f"Pairwise_set/{scenario}"})
    bon: dict[str, list[dict]] = {s: [] for s in scenarios}
    for index in range(int(BON_ITEMS * scale)):
        turns, answers, scenario = pool[rng.randrange(len(pool))]
        n_losers = rng.choices(list(LOSERS), weights=list(LOSERS.values()))[0]
        losers = [answers[1], *(words(rng, 40, 500) for _ in range(n_losers - 1))]
        bon[scenario].append({"bon_uid": f"b{index}", "conversation_input": turns,
                              "bon_best": {"llm_name": "a", "answer": answers[0]},
                              "loser_list": [{"llm_name": "c", "answer": text} for text in losers],
                              "category_path": f"BoN_set/{scenario}"})
    for folder, sets in (("Pairwise_set", pairwise), ("BoN_set", bon)):
        for scenario, rows in ((s, r) for s, r in sets.items() if r):  # --quick leaves some scenarios empty
            path = root / folder / f"{scenario}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", default="1000", help="distinct texts to score (a number, or `all`)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workdir", help="keep the files here (default: a temporary folder)")
    parser.add_argument("--quick", action="store_true", help="1 %% of the full size and 50 texts (a smoke test)")
    args = parser.parse_args()
    import pandas as pd

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.workdir or scratch)
        work.mkdir(parents=True, exist_ok=True)
        data = work / "RMB_dataset"
        scale = 0.01 if args.quick else 1.0
        write_layout(data, scale)
        texts_file = work / "out/texts.parquet"
        prepare_s = timed(["rmeval", "rmb-prepare", "--source", "local", "--path", str(data),
                           "--out", str(texts_file)])
        texts = pd.read_parquet(texts_file)
        items = pd.read_parquet(texts_file.with_name("items.parquet"))
        wanted = len(texts) if args.texts == "all" else min(len(texts), 50 if args.quick else int(args.texts))
        subset = work / "out/subset.parquet"
        texts.head(wanted).to_parquet(subset)
        model = work / "tiny-model"
        if not (model / "config.json").exists():
            subprocess.run(["rmeval", "tiny-model", str(model), "--seed", "0"], check=True,
                           stdout=subprocess.DEVNULL)
        spec = {"name": "tiny", "path": str(model), "adapter": "sequence-classification", "dtype": "float32",
                "max_length": 256}
        scores = work / "scores/tiny/texts.parquet"
        score_s = timed(["rmeval", "score", "--spec", json.dumps(spec), "--task", "rmb", "--input", str(subset),
                         "--output", str(scores), "--threads", str(args.threads), "--device", "cpu", "--no-server"])
        scored = pd.read_parquet(scores).set_index("id")["reward"]
        full = texts[["id"]].assign(reward=texts["id"].map(scored).fillna(texts["response"].str.len().astype(float)),
                                    n_tokens=0, truncated=False)
        (work / "scores/all").mkdir(parents=True, exist_ok=True)
        full.to_parquet(work / "scores/all/texts.parquet")
        metrics_s = timed(["rmeval", "rmb-metrics", "--data", str(texts_file), "--scores", str(work / "scores"),
                           "--scored-models", "all", "--out", str(work / "tables")])
        result = {
            "cpu": _runs.cpu_name(), "threads": args.threads, "scale": scale,
            "items": {"pairwise": int((items.drop_duplicates(["kind", "item_id"])["kind"] == "pairwise").sum()),
                      "bon": int((items.drop_duplicates(["kind", "item_id"])["kind"] == "bon").sum())},
            "responses": len(items), "distinct_texts": len(texts), "scored_texts": wanted,
            "prepare_s": round(prepare_s, 2), "score_s": round(score_s, 2),
            "score_s_per_1000_texts": round(1000 * score_s / max(wanted, 1), 2),
            "metrics_s": round(metrics_s, 2), "pid": os.getpid(),
        }
    print(f"RMB full-size cost ({result['cpu']}): {result['distinct_texts']} distinct texts of {result['responses']} "
          f"responses; prepare {result['prepare_s']} s, score {result['score_s_per_1000_texts']} s per 1,000 texts "
          f"(tiny model, {args.threads} thread(s)), metrics {result['metrics_s']} s")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
