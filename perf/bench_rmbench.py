"""What RM-Bench costs at full size: a real Snakemake run of the rmbench benchmark alone on synthetic data in the
official layout (total_dataset.json: 1,327 prompts, chat 129, math 529, code 228, safety-refuse 284,
safety-response 157; six responses each, 7,962 texts), scored by a local tiny reward model (`rmeval tiny-model`).

The real file is not in this repository (and not downloaded here); the synthetic one has its size and its texts'
lengths: the mean characters per response of the published per-domain files (chat 1,215, code 1,774,
safety-refuse 877, safety-response 996; math_filtered.json could not be read here, 1,000 is assumed), concise
responses 0.4 of the mean and detailed ones 1.2 and 1.4 (the mean is kept). Texts are seeded word salad: a tiny
model's throughput depends on token counts, not on meaning.

Prints the run's wall seconds, the score job's wall seconds, tokens and tokens per second (its .meta.json), and
both per 1,000 texts, with the CPU named; one JSON line last.

Usage: python perf/bench_rmbench.py [--scale 1.0] [--cores 2] [--workdir DIR] [--keep]
       python perf/bench_rmbench.py --quick       # 2 % of the prompts: a smoke check of the script itself
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runs import REPO_ROOT, cpu_name, snakemake  # noqa: E402

PROMPTS = {"chat": 129, "math": 529, "code": 228, "safety-refuse": 284, "safety-response": 157}
MEAN_CHARS = {"chat": 1215, "math": 1000, "code": 1774, "safety-refuse": 877, "safety-response": 996}
STYLE_SHARE = (0.4, 1.2, 1.4)  # concise, detailed plain, detailed markdown: mean 1.0
WORDS = ("the", "reward", "model", "answer", "because", "value", "function", "returns", "safe", "step", "first",
         "then", "result", "check", "number", "list", "user", "request", "cannot", "help", "example", "case")
QUICK_SCALE = 0.02


def text(rng: np.random.Generator, chars: int, markdown: bool) -> str:
    words: list[str] = []
    length = 0
    while length < chars:
        word = str(rng.choice(WORDS))
        words.append(word)
        length += len(word) + 1
    body = " ".join(words)[:chars]
    if not markdown:
        return body
    lines = [f"- {line.strip()}" for line in body.split(" then ") if line.strip()]
    return "## Answer\n" + "\n".join(lines)


def synthetic_units(scale: float, seed: int = 0) -> list[dict]:
    """total_dataset.json's layout (id, prompt, chosen, rejected, domain; ids counted per domain, so they repeat)."""
    rng = np.random.default_rng(seed)
    units = []
    for domain, count in PROMPTS.items():
        for number in range(max(1, round(count * scale))):
            mean = MEAN_CHARS[domain]
            responses = {side: [text(rng, int(mean * share * rng.uniform(0.8, 1.2)), markdown=style == 2)
                                for style, share in enumerate(STYLE_SHARE)] for side in ("chosen", "rejected")}
            units.append({"id": number, "prompt": text(rng, int(rng.integers(40, 400)), False), **responses,
                          "domain": domain})
    return units


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the published prompt counts (1.0: full)")
    parser.add_argument("--quick", action="store_true", help=f"--scale {QUICK_SCALE}: a smoke check")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="the score job's torch threads (scoring.threads)")
    parser.add_argument("--workdir", type=Path, default=None, help="run folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the run folder")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from rmeval.testing.tiny_model import build_tiny_model

    args = parse_args(argv)
    scale = QUICK_SCALE if args.quick else args.scale
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="rmeval-rmbench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    units = synthetic_units(scale)
    data = workdir / "inputs" / "total_dataset.json"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text(json.dumps(units))
    model = build_tiny_model(workdir / "inputs" / "tiny", seed=0)
    config = {"registry": str(REPO_ROOT / "config" / "models.yaml"),
              "models": [{"name": "tiny", "path": str(model), "adapter": "sequence-classification",
                          "dtype": "float32", "resources": {"gpu": 0, "mem_mb": 4000, "runtime": 60}}],
              "scoring": {"threads": args.threads},
              "rmbench": {"enabled": True, "source": "local", "path": str(data)}}
    configfile = workdir / "config.yaml"
    configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    wall = snakemake(workdir, configfile, ["results/tables/rmbench.csv"], args.cores)
    meta = json.loads((workdir / "results/scores/rmbench/tiny/rmbench.meta.json").read_text())
    texts = int(meta["rows"])
    summary = {
        "benchmark": "bench_rmbench", "cpu": cpu_name(), "cores": args.cores, "threads": args.threads,
        "scale": scale, "prompts": len(units), "texts": texts, "distinct_sequences": meta.get("distinct_sequences"),
        "tokens": meta.get("tokens"), "run_wall_s": round(wall, 2), "score_wall_s": meta.get("wall_s"),
        "tokens_per_s": meta.get("tokens_per_s"),
        "run_s_per_1000_texts": round(1000 * wall / texts, 2),
        "score_s_per_1000_texts": round(1000 * float(meta["wall_s"]) / texts, 2),
    }
    print(f"RM-Bench, {len(units)} prompts, {texts} texts, tiny model, {summary['cpu']} ({args.cores} cores, "
          f"{args.threads} scoring thread(s)):")
    print(f"  whole run (prepare, score, metrics): {wall:.1f} s, {summary['run_s_per_1000_texts']} s per 1,000 texts")
    print(f"  score job: {meta['wall_s']} s, {meta.get('tokens')} tokens ({meta.get('tokens_per_s')} tokens/s), "
          f"{summary['score_s_per_1000_texts']} s per 1,000 texts")
    print(json.dumps(summary))
    if not args.keep and args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
