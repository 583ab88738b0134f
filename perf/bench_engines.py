"""rmeval's transformers engine, rmeval's vLLM engine and RewardBench's pipeline loop, side by side, on one model.

The model: a Llama-style `LlamaForSequenceClassification` built here with random weights (`_models.ensure_model`:
a 32k byte-level BPE trained on the shared arXiv abstracts, Llama-3-style template). `--size 150m`: hidden 768, 16
layers, 12 heads of 64 (4 KV heads), MLP 2048: 125M parameters; `--size tiny` (hidden 256, 2 layers, head_dim 64,
which vLLM's CPU attention needs) checks the code paths in a minute.
The texts: RewardBench-like, several responses per prompt: `--prompts` prompts (a request to summarise one abstract,
quoted whole) x `--responses` responses each (other abstracts' opening sentences), rendered as a conversation.
Compared, on the same rendered texts and the same token count (rmeval's, after its template and truncation):
  transformers  rmeval's engine in this process: length-sorted batches to the token budget (rmeval score's path);
  vllm          rmeval's vLLM engine: a `vllm serve` started from `rmeval engine install vllm`'s environment, fed
                token ids per engine batch, prefix caching on (its start-up is reported apart from its scoring);
  pipeline      RewardBench's pipeline loop, re-stated here (not the `rewardbench` package, whose scripts read the
                Hub's dataset layout; perf/official_rewardbench.py runs them for parity): texts in dataset order,
                batches of `--pipeline-batch` (run_rm.py's --batch_size, 64), `tokenizer(padding=True,
                truncation=True, max_length)`, the model's forward pass, `logits[:, 0]` (rewardbench/models/
                pipeline.py RewardBenchPipeline.__call__).
Reported per engine: texts/s, tokens/s, achieved FLOP/s = 2 x parameters x tokens / seconds, and its share of the
peak (also with the input embedding left out: a lookup, no FLOPs; vLLM's rate counts the tokens its prefix cache
served as done, so it is an effective rate and may pass the peak): on the CPU, an fp32 matmul measured here in torch with the same threads; on a GPU (`--device cuda`, bf16), the
data-sheet peak of perf/_gpu_bench.py. vLLM: the prompt tokens its prefix cache served (/metrics, before and after).
Agreement: each engine's rewards against the transformers engine's (max |difference|).

    python perf/bench_engines.py --size tiny --prompts 8 --responses 4        # a check (about a minute)
    python perf/bench_engines.py                                              # the measurement (quiet machine)
    python perf/bench_engines.py --device cuda --dtype bfloat16 --threads 8   # GPU (perf/bench_gpu.sh engines)

The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _models  # noqa: E402

SIZES = {
    "150m": dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=16, num_attention_heads=12,
                 num_key_value_heads=4),
    "tiny": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2),
}


def model_parameters(model: Path) -> tuple[int, int]:
    """(all parameters, those of the input embedding): a lookup, not a matmul, so it does no FLOPs per token."""
    from transformers import AutoModelForSequenceClassification

    net = AutoModelForSequenceClassification.from_pretrained(model)
    return sum(p.numel() for p in net.parameters()), int(net.get_input_embeddings().weight.numel())


def measured_peak_flops(threads: int, size: int = 2048, repeats: int = 10) -> float:
    """This CPU's fp32 matmul rate in torch at `threads` threads (best of `repeats` after a warm-up)."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - started)
    return 2 * size**3 / best


def gpu_peak_flops() -> float | None:
    import _gpu_bench
    import torch

    return _gpu_bench.peak_flops(torch.cuda.get_device_name(0), None)


def build_texts(papers: list[_models.Paper], prompts: int, responses: int):
    """(ids, prompts, responses): each prompt quotes one abstract; its responses are other abstracts' openings."""
    from rmeval.tasks import Pairs

    ids, prompt_texts, response_texts = [], [], []
    for p in range(prompts):
        paper = papers[p % len(papers)]
        prompt = f"Summarise this abstract in two sentences.\n\n{paper.title.strip()}\n\n{paper.abstract.strip()}"
        for r in range(responses):
            other = papers[(p * responses + r + prompts) % len(papers)]
            ids.append(f"p{p}-r{r}")
            prompt_texts.append(prompt)
            response_texts.append(" ".join(other.abstract.split(". ")[:2]).strip())
    return Pairs(ids=ids, prompts=prompt_texts, responses=response_texts, steps=None)


def spec_for(model: Path, engine: str, dtype: str, gpu: int, max_length: int):
    from rmeval.registry import spec_from_mapping

    return spec_from_mapping({"name": "bench", "path": str(model), "dtype": dtype, "max_length": max_length,
                              "resources": {"gpu": gpu}, "engine": engine}, where="bench")


def run_rmeval(model: Path, pairs, engine: str, args: argparse.Namespace) -> dict[str, Any]:
    from rmeval.models import load_scorer
    from rmeval.scoring.engine import EngineSettings, score_rows
    from rmeval.scoring.request import DEFAULT_TOKEN_BUDGET, JobRequest, resolve_runtime
    from rmeval.vllm_engine import http

    spec = spec_for(model, engine, args.dtype, 1 if args.device == "cuda" else 0, args.max_length)
    request = JobRequest(spec=spec, task="pairs", input=Path(os.devnull), output=Path(os.devnull),
                         meta=Path(os.devnull), threads=args.threads, device=args.device)
    runtime = resolve_runtime(request)
    started = time.perf_counter()
    scorer = load_scorer(spec, runtime)
    load_s = time.perf_counter() - started
    try:
        prepared = scorer.prepare(pairs)
        before = http.prefix_cache_counts(scorer.session, scorer.url) if engine == "vllm" else {}
        budget = args.token_budget or DEFAULT_TOKEN_BUDGET["cpu" if args.device == "cpu" else "cuda"]
        started = time.perf_counter()
        table, report = score_rows(scorer, pairs, prepared, EngineSettings(budget, args.max_batch_rows, 0), None,
                                   "bench")
        seconds = time.perf_counter() - started
        after = http.prefix_cache_counts(scorer.session, scorer.url) if engine == "vllm" else {}
    finally:
        scorer.close()
    del scorer
    if args.device == "cuda":  # the next engine (a vLLM server) wants the GPU's memory
        import gc

        import torch

        gc.collect()
        torch.cuda.empty_cache()
    result = {"seconds": seconds, "load_s": load_s, "rewards": table["reward"].to_numpy(),
              "tokens": int(table["n_tokens"].sum()), "distinct": report.distinct_rows, "budget": budget}
    if engine == "vllm":
        result["prefix_cache"] = {key: after.get(key, 0.0) - before.get(key, 0.0) for key in after}
    return result


def run_pipeline(model: Path, pairs, args: argparse.Namespace) -> dict[str, Any]:
    """RewardBench's loop, re-stated: dataset order, fixed batches, padding to the longest, logits[:, 0]."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    dtype = getattr(torch, args.dtype)
    tokenizer = AutoTokenizer.from_pretrained(model)
    net = AutoModelForSequenceClassification.from_pretrained(model, dtype=dtype).eval().to(args.device)
    texts = [tokenizer.apply_chat_template([{"role": "user", "content": prompt},
                                            {"role": "assistant", "content": response}], tokenize=False)
             for prompt, response in zip(pairs.prompts, pairs.responses, strict=True)]
    rewards = []
    started = time.perf_counter()
    with torch.inference_mode():
        for first in range(0, len(texts), args.pipeline_batch):
            inputs = tokenizer(texts[first:first + args.pipeline_batch], truncation=True, max_length=args.max_length,
                               padding=True, return_tensors="pt").to(args.device)
            rewards.append(net(**inputs).logits[:, 0].float().cpu().numpy())
        if args.device == "cuda":
            torch.cuda.synchronize()
    return {"seconds": time.perf_counter() - started, "rewards": np.concatenate(rewards).astype(np.float64)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="150m")
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--responses", type=int, default=6, help="responses per prompt (RewardBench 2: 4+)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--dtype", default=None, help="default: float32 on cpu, bfloat16 on cuda")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--token-budget", type=int, default=None, help="rmeval's (default: the device's)")
    parser.add_argument("--max-batch-rows", type=int, default=64)
    parser.add_argument("--pipeline-batch", type=int, default=64)
    parser.add_argument("--engines", default="transformers,vllm,pipeline")
    parser.add_argument("--abstracts", type=Path, default=_models.default_abstracts_path())
    args = parser.parse_args(argv)
    args.dtype = args.dtype or ("bfloat16" if args.device == "cuda" else "float32")
    if args.abstracts is None:
        print("bench_engines: no abstracts ($RMEVAL_SHARED_DATA or ../shared/data)", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    papers = _models.read_papers(args.abstracts)
    settings = _models.BenchModelSettings(**SIZES[args.size])
    model = _models.ensure_model(args.abstracts, settings=settings)
    parameters, embedding = model_parameters(model)
    pairs = build_texts(papers, args.prompts, args.responses)
    peak = measured_peak_flops(args.threads) if args.device == "cpu" else gpu_peak_flops()
    results: dict[str, dict[str, Any]] = {}
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    for engine in engines:
        print(f"bench_engines: {engine} ...", file=sys.stderr, flush=True)
        results[engine] = run_pipeline(model, pairs, args) if engine == "pipeline" else \
            run_rmeval(model, pairs, engine, args)
    tokens = next(r["tokens"] for r in results.values() if "tokens" in r) if any(
        "tokens" in r for r in results.values()) else None
    reference = results.get("transformers", {}).get("rewards")
    rows = []
    summary: dict[str, Any] = {"size": args.size, "parameters": parameters, "embedding_parameters": embedding,
                               "texts": len(pairs), "tokens": tokens,
                               "device": args.device, "dtype": args.dtype, "threads": args.threads,
                               "peak_flops": peak, "peak_source": "torch fp32 matmul 2048^3" if args.device == "cpu"
                               else "data sheet (bf16 dense)", "engines": {}}
    for engine, result in results.items():
        seconds = result["seconds"]
        flops = 2 * parameters * tokens / seconds if tokens else None
        matmul = 2 * (parameters - embedding) * tokens / seconds if tokens else None
        entry = {"seconds": round(seconds, 2), "texts_per_s": round(len(pairs) / seconds, 2),
                 "tokens_per_s": round(tokens / seconds, 1) if tokens else None,
                 "flops": flops, "share_of_peak": flops / peak if flops and peak else None,
                 "share_of_peak_without_embedding": matmul / peak if matmul and peak else None}
        if reference is not None and engine != "transformers":
            entry["max_abs_diff_vs_transformers"] = float(np.abs(result["rewards"] - reference).max())
        for key in ("load_s", "prefix_cache"):
            if key in result:
                entry[key] = result[key]
        summary["engines"][engine] = entry
        share = f"{100 * entry['share_of_peak']:.1f} %" if entry["share_of_peak"] else "-"
        bare = (f"{100 * entry['share_of_peak_without_embedding']:.1f} %"
                if entry["share_of_peak_without_embedding"] else "-")
        rows.append(f"| {engine} | {entry['texts_per_s']} | {entry['tokens_per_s']} | "
                    f"{(flops or 0) / 1e9:.1f} | {share} | {bare} |")
    print(f"{len(pairs)} texts ({args.prompts} prompts x {args.responses} responses), {tokens} tokens, "
          f"{parameters / 1e6:.1f}M parameters, {args.device} {args.dtype}, {args.threads} threads; peak "
          f"{(peak or 0) / 1e9:.1f} GFLOP/s ({summary['peak_source']})")
    print("| engine | texts/s | tokens/s | GFLOP/s (2 x params x tokens) | share of peak | same, embedding left out "
          "|\n|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    if "vllm" in summary["engines"]:
        cache = summary["engines"]["vllm"].get("prefix_cache", {})
        print(f"vLLM prefix cache: {cache.get('prefix_cache_hits', 0):.0f} of {cache.get('prefix_cache_queries', 0):.0f}"
              " prompt tokens served from the cache")
    print(json.dumps(summary, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
