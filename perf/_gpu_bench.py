"""The Python half of perf/bench_gpu.sh: (b) RewardBench's batching vs (c) the rmeval engine on a GPU.

Builds a ~1B-parameter Llama reward model from a config (random init, bf16; Llama-3.2-1B's shape with
the locally trained 32k BPE tokenizer), scores the same real abstracts with both policies and reports
tokens/s and MFU = 2 * params * tokens / time / peak bf16 FLOP/s. `--size tiny --device cpu` runs the
same code paths on a small model on CPU, so the script is checked on machines without a GPU.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _models  # noqa: E402
import bench_scoring  # noqa: E402

SIZES = {
    # Llama-3.2-1B's decoder (hidden 2048, 16 layers, 32 heads / 8 KV heads, MLP 8192) with a 32k vocabulary.
    "1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
               num_key_value_heads=8),
    "tiny": dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2),
}
# Dense bf16 peak (no sparsity) by device name, in FLOP/s, from NVIDIA's data sheets.
PEAK_BF16 = (
    ("H200", 989.4e12),
    ("H100 NVL", 835e12),
    ("H100 PCIe", 756e12),
    ("H100", 989.4e12),  # SXM
    ("GH200", 989.4e12),
    ("A100", 312e12),
    ("L40S", 362.05e12),
)
GOALS = {"mfu_c": 0.45, "c_over_b": 3.0}


def peak_flops(device_name: str, override_tflops: float | None) -> float | None:
    if override_tflops:
        return override_tflops * 1e12
    for marker, peak in PEAK_BF16:
        if marker in device_name:
            return peak
    return None


def build_model(outdir: Path, papers: list[_models.Paper], size: str, dtype: str) -> Path:
    """Random-init reward model from a config, saved with save_pretrained so the engine loads it as users do."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    if (outdir / "config.json").is_file():
        return outdir
    tokenizer = _models.train_tokenizer(papers, 32000)
    config = LlamaConfig(
        vocab_size=len(tokenizer), max_position_embeddings=2048, num_labels=1,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False, **SIZES[size],
    )
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):  # initialise on the GPU: seconds instead of a minute of CPU init
        model = LlamaForSequenceClassification(config).to(getattr(torch, dtype)).eval()
    tmp = outdir.with_name(outdir.name + ".tmp")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    os.replace(tmp, outdir)
    del model
    return outdir


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="abstracts JSONL (id, title, abstract)")
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--size", choices=sorted(SIZES), default="1b")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--workdir", type=Path, required=True, help="where the built model is written")
    parser.add_argument("--engine-budget", type=int, default=None, help="engine token budget (default: its GPU one)")
    parser.add_argument("--batch-size", type=int, default=8, help="RewardBench's batch size for run (b)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="override the detected bf16 peak")
    args = parser.parse_args(argv)

    import torch
    from rmeval.tasks import Pairs

    if args.device == "cuda" and not torch.cuda.is_available():
        print("_gpu_bench: no CUDA device visible; use --device cpu --size tiny for a CPU check", file=sys.stderr)
        return 2
    dtype = "bfloat16" if args.device == "cuda" else "float32"
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    peak = peak_flops(device_name, args.peak_tflops) if args.device == "cuda" else None

    started = time.perf_counter()
    all_papers = _models.read_papers(args.data)
    papers = _models.sample_papers(all_papers, args.rows)
    model_dir = build_model(args.workdir / f"llama-rm-{args.size}", all_papers, args.size, dtype)
    build_s = time.perf_counter() - started

    messages = [_models.chat_messages(paper) for paper in papers]
    pairs = Pairs(ids=[p.id for p in papers], prompts=[m[0]["content"] for m in messages],
                  responses=[m[1]["content"] for m in messages], steps=None)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_dir, dtype=getattr(torch, dtype), attn_implementation="sdpa", device_map=args.device).eval()
    texts = [tokenizer.apply_chat_template(m, tokenize=False) for m in messages]
    engine = bench_scoring.load_engine(model_dir, dtype, 2048, args.engine_budget, device=args.device)
    params = sum(p.numel() for p in model.parameters())
    matmul_params = params - model.get_input_embeddings().weight.numel()  # an embedding lookup is no FLOP

    # Warm-up: cuBLAS handles, kernels, the allocator's pools.
    bench_scoring.rewardbench_policy(tokenizer, model, texts[:16], 2048, args.batch_size, args.device)
    warm = Pairs(pairs.ids[:64], pairs.prompts[:64], pairs.responses[:64], None)
    bench_scoring.engine_run(engine, warm)
    synchronize(args.device)

    def run(name: str, policy: str, work) -> bench_scoring.RunResult:
        def synced():
            outcome = work()
            synchronize(args.device)
            return outcome

        return bench_scoring.timed(name, policy, dtype, synced)

    results = [
        run("b", f"RewardBench: batch {args.batch_size}, dataset order, left pad",
            lambda: bench_scoring.rewardbench_policy(tokenizer, model, texts, 2048, args.batch_size, args.device)),
        run("c", f"rmeval engine: sorted, budget {engine.token_budget} tokens",
            lambda: bench_scoring.engine_run(engine, pairs)),
    ]
    bench_scoring.compare_to_reference(results[1], results[0].rewards)

    rows: list[dict[str, Any]] = []
    for result in results:
        row = result.row()
        flops = 2.0 * matmul_params * result.real_tokens
        row["achieved_tflops"] = round(flops / result.wall_s / 1e12, 2)
        row["mfu"] = round(flops / result.wall_s / peak, 4) if peak else None
        row["mfu_all_params"] = round(2.0 * params * result.real_tokens / result.wall_s / peak, 4) if peak else None
        rows.append(row)
    b, c = results
    c_over_b = c.tokens_per_s / b.tokens_per_s
    goals = {
        "mfu_c": {"target": GOALS["mfu_c"], "measured": rows[1]["mfu"],
                  "met": bool(rows[1]["mfu"] is not None and rows[1]["mfu"] >= GOALS["mfu_c"])},
        "c_over_b": {"target": GOALS["c_over_b"], "measured": round(c_over_b, 3), "met": bool(c_over_b >= 3.0)},
    }
    for row in rows:
        mfu = "n/a" if row["mfu"] is None else f"{100 * row['mfu']:.1f}%"
        print(f"{row['name']}  {row['policy']:<44} {row['tokens_per_s']:>12.0f} tok/s  "
              f"pad eff {row['padding_efficiency']:.3f}  MFU {mfu}")
    summary = {
        "benchmark": "bench_gpu",
        "device": device_name,
        "dtype": dtype,
        "size": args.size,
        "rows": len(texts),
        "params": params,
        "matmul_params": matmul_params,
        "peak_bf16_flops": peak,
        "mfu_definition": "2 * matmul_params * real tokens / wall s / peak bf16 (mfu_all_params counts the embedding)",
        "model_build_s": round(build_s, 2),
        "runs": rows,
        "c_vs_b_max_rel_diff": c.max_rel_diff_vs_a,
        "goals": goals,
        "rewardbench_cli": "not run: its policy is re-implemented as run (b) (see bench_scoring.py)",
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
