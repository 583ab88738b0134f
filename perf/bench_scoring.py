"""Scoring throughput on CPU: one-at-a-time vs RewardBench's batching vs the rmeval engine.

One process, one locally built ~30M-parameter Llama-style reward model (perf/_models.py),
the same real arXiv abstracts with Song et al. (2025)'s prompt rendered through the model's chat
template. Runs, in this order:
  (a) one example at a time (the reference rewards);
  (b) RewardBench's policy: a fixed batch of 8 in dataset order, each batch tokenised on its own
      and left-padded to its longest row (re-implemented: RewardBench's CLI needs CUDA);
  (c) the rmeval engine (rmeval.models.load_scorer + rmeval.scoring.engine.score_rows): rows
      tokenised once, length-sorted batches built to a token budget.
Each run reports tokens/s (real tokens over wall seconds, tokenisation included, model loading
excluded), padding efficiency (real tokens over computed tokens) and the largest relative reward
difference against (a). bf16 rows for (b) and (c) follow, with their drift against fp32 (a).

With --dedup-ab it times only the engine, with and without its deduplication of identical model inputs
(rmeval.scoring.distinct: keys hashed in prepare, one score per key), interleaved A/B over --repeats rounds on
rows without duplicates, and reports the median cost of deduplication (goal: <= 2 %).

Usage: python perf/bench_scoring.py [--rows 2000] [--quick] [--repeats 1] [--threads N] [--engine-compile]
       python perf/bench_scoring.py --dedup-ab [--rows 400] [--repeats 7] [--threads 1]
On a machine shared with other jobs, use --threads 1: wall ratios then mix different loads, while
process CPU time stays exact (no threads spinning at barriers); the goals are judged on CPU time
whenever Linux's CPU pressure (PSI) shows contention. The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _models  # noqa: E402 - the benchmark helpers live beside this script
import _runs  # noqa: E402

REWARDBENCH_CLI_NOTE = (
    "RewardBench's own CLI (scripts/run_rm.py) was not run: it cannot run without CUDA (it loads reward models "
    "8-bit through bitsandbytes with device_map={'': accelerator.process_index} and float16 by default). "
    "Run (b) re-implements its batching policy in this process: batches of 8 in dataset order, tokenised per "
    "batch with truncation_side=left, left-padded to the longest row, no position_ids, logits[:, 0]. It leaves "
    "out the transformers pipeline's own per-row overhead, so (b) is if anything flattered."
)
QUICK_ROWS = 16
# bf16 matmuls are ~8x slower than fp32 on CPUs without native bf16 (AVX2): in --quick mode the bf16 rows run on
# the first rows only (two RewardBench batches of fp32 stay, so its fixed batch of 8 is still exercised).
QUICK_BF16_ROWS = 2
# --quick times nothing that matters: its warm-ups (of every policy, fp32 and bf16) are one row each.
QUICK_WARMUP_ROWS = 1
# Relative difference |r - r_a| / max(|r_a|, rms(r_a)): relative to the reward itself, or to the reward
# scale for rewards smaller than it, so a reward that happens to sit near zero does not turn float noise
# (~1e-7 absolute) into a large "relative" number. The pointwise |r - r_a| / |r_a| is reported too.
REWARD_TOLERANCE = 1e-4
GOALS = {"c_over_b": 1.5, "c_over_a": 1.2}
CONTENDED_PSI = 20.0  # % of time some task waited for a CPU (Linux PSI avg10)


@dataclass
class RunResult:
    name: str  # a | b | c
    policy: str
    dtype: str
    rows: int
    real_tokens: int
    computed_tokens: int
    batches: int
    wall_s: float
    cpu_s: float  # process CPU seconds (all threads): less sensitive to other tenants than wall time
    cpu_pressure_before: float | None
    cpu_pressure_after: float | None
    load_avg_1m: float
    max_rel_diff_vs_a: float | None = None
    max_abs_diff_vs_a: float | None = None
    max_pointwise_rel_diff_vs_a: float | None = None
    rewards: np.ndarray | None = None

    @property
    def tokens_per_s(self) -> float:
        return self.real_tokens / self.wall_s if self.wall_s > 0 else float("nan")

    @property
    def padding_efficiency(self) -> float:
        return self.real_tokens / self.computed_tokens if self.computed_tokens else float("nan")

    def row(self) -> dict[str, Any]:
        values = {k: v for k, v in asdict(self).items() if k != "rewards"}
        values["tokens_per_s"] = round(self.tokens_per_s, 1)
        values["cpu_tokens_per_s"] = round(self.real_tokens / self.cpu_s, 1) if self.cpu_s > 0 else None
        values["padding_efficiency"] = round(self.padding_efficiency, 4)
        values["wall_s"] = round(self.wall_s, 3)
        values["cpu_s"] = round(self.cpu_s, 3)
        return values


def cpu_pressure() -> float | None:
    """Linux PSI: % of the last 10 s in which some runnable task waited for a CPU (other tenants)."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except OSError:
        return None
    fields = dict(part.split("=") for part in first.split()[1:])
    return float(fields["avg10"])


def timed(name: str, policy: str, dtype: str, work: Callable[[], tuple[np.ndarray, int, int, int]]) -> RunResult:
    pressure_before = cpu_pressure()
    wall_started, cpu_started = time.perf_counter(), time.process_time()
    rewards, real_tokens, computed_tokens, batches = work()
    wall_s, cpu_s = time.perf_counter() - wall_started, time.process_time() - cpu_started
    result = RunResult(
        name=name, policy=policy, dtype=dtype, rows=len(rewards), real_tokens=real_tokens,
        computed_tokens=computed_tokens, batches=batches, wall_s=wall_s, cpu_s=cpu_s,
        cpu_pressure_before=pressure_before, cpu_pressure_after=cpu_pressure(),
        load_avg_1m=os.getloadavg()[0], rewards=rewards,
    )
    # One line per finished run on stderr, so a long run shows where it is.
    print(f"bench_scoring: ({name}) {dtype} {policy}: {real_tokens} tokens, {result.tokens_per_s:.0f} tok/s wall, "
          f"{real_tokens / cpu_s if cpu_s > 0 else float('nan'):.0f} tok/s CPU, pad eff "
          f"{result.padding_efficiency:.3f}", file=sys.stderr, flush=True)
    return result


# --- (a) and (b): plain transformers -------------------------------------------------------------
def load_hf_model(model_dir: Path, dtype: str):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_dir, dtype=getattr(torch, dtype), attn_implementation="sdpa"
    ).eval()
    return tokenizer, model


def one_at_a_time(tokenizer, model, texts: list[str], max_length: int) -> tuple[np.ndarray, int, int, int]:
    import torch

    rewards = np.empty(len(texts))
    tokens = 0
    with torch.inference_mode():
        for index, text in enumerate(texts):
            encoded = tokenizer(text, truncation=True, max_length=max_length, return_tensors="pt")
            rewards[index] = model(**encoded).logits[0, 0].float().item()
            tokens += encoded["input_ids"].shape[1]
    return rewards, tokens, tokens, len(texts)


def rewardbench_policy(tokenizer, model, texts: list[str], max_length: int,
                       batch_size: int = 8, device: str = "cpu") -> tuple[np.ndarray, int, int, int]:
    import torch

    tokenizer.padding_side = "left"
    tokenizer.truncation_side = "left"  # as run_rm.py sets it
    rewards: list[float] = []
    real = computed = batches = 0
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            encoded = tokenizer(
                texts[start : start + batch_size], padding=True, truncation=True, max_length=max_length,
                return_tensors="pt", return_token_type_ids=False,
            ).to(device)
            logits = model(**encoded).logits
            rewards.extend(logits[:, 0].float().tolist())
            real += int(encoded["attention_mask"].sum())
            computed += encoded["input_ids"].numel()
            batches += 1
    return np.asarray(rewards), real, computed, batches


# --- (c): the rmeval engine -----------------------------------------------------------------------
@dataclass
class EngineHandle:
    scorer: Any
    token_budget: int
    max_batch_rows: int


def load_engine(model_dir: Path, dtype: str, max_length: int, token_budget: int | None,
                device: str = "cpu") -> EngineHandle:
    from rmeval.models import load_scorer
    from rmeval.models.base import Runtime
    from rmeval.registry import spec_from_mapping
    from rmeval.scoring.job import DEFAULT_TOKEN_BUDGET, JobRequest

    spec = spec_from_mapping(
        {"name": "bench-llama-30m", "path": str(model_dir), "dtype": dtype, "max_length": max_length,
         "resources": {"gpu": 0 if device == "cpu" else 1}},
        where="bench_scoring",
    )
    scorer = load_scorer(spec, Runtime(device=device, dtype=dtype, n_gpus=0 if device == "cpu" else 1))
    max_rows = JobRequest.__dataclass_fields__["max_batch_rows"].default
    return EngineHandle(scorer, token_budget or DEFAULT_TOKEN_BUDGET["cpu" if device == "cpu" else "cuda"], max_rows)


def engine_run(handle: EngineHandle, pairs) -> tuple[np.ndarray, int, int, int]:
    from rmeval.scoring.engine import EngineSettings, score_rows

    scorer = handle.scorer
    prepared = scorer.prepare(pairs)
    computed = [0]
    inner_score = scorer.score

    def counting_score(indices: np.ndarray):
        # Computed tokens = rows x longest row: the padded tensor the model actually runs.
        computed[0] += len(indices) * int(prepared.costs[indices].max())
        return inner_score(indices)

    scorer.score = counting_score
    try:
        settings = EngineSettings(token_budget=handle.token_budget, max_batch_rows=handle.max_batch_rows,
                                  checkpoint_every=0, progress_every_s=3600.0)
        table, report = score_rows(scorer, pairs, prepared, settings, None, "bench-llama-30m")
    finally:
        del scorer.score
    return table["reward"].to_numpy(dtype=np.float64), int(table["n_tokens"].sum()), computed[0], report.batches


def without_dedup():
    """The engine as before deduplication: no keys computed in prepare, so every row is its own input."""
    from contextlib import contextmanager

    from rmeval.models.chat import Encoded

    @contextmanager
    def patched():
        keys = Encoded.keys
        Encoded.keys = lambda self, extra=None: None  # type: ignore[method-assign]
        try:
            yield
        finally:
            Encoded.keys = keys  # type: ignore[method-assign]

    return patched()


def dedup_ab(engine: EngineHandle, pairs, repeats: int) -> dict[str, Any]:
    """Interleaved A/B (order alternating per round): the engine with and without deduplication; CPU and wall."""
    arms: dict[str, list[RunResult]] = {"dedup": [], "before": []}
    for round_index in range(repeats):
        order = ("dedup", "before") if round_index % 2 == 0 else ("before", "dedup")
        for arm in order:
            if arm == "before":
                with without_dedup():
                    arms[arm].append(timed("c0", "engine without dedup", "float32", lambda: engine_run(engine, pairs)))
            else:
                arms[arm].append(timed("c", "engine with dedup", "float32", lambda: engine_run(engine, pairs)))
    assert arms["dedup"][0].rewards is not None and arms["before"][0].rewards is not None
    same = bool(np.array_equal(arms["dedup"][0].rewards, arms["before"][0].rewards))
    ratios_cpu = [d.cpu_s / b.cpu_s for d, b in zip(arms["dedup"], arms["before"], strict=True)]
    ratios_wall = [d.wall_s / b.wall_s for d, b in zip(arms["dedup"], arms["before"], strict=True)]
    prepare_started = time.process_time()
    engine.scorer.prepare(pairs)
    prepare_cpu_s = time.process_time() - prepare_started
    keys_started = time.process_time()
    engine.scorer.encoded.keys()
    keys_cpu_s = time.process_time() - keys_started
    return {
        "benchmark": "bench_scoring --dedup-ab",
        "rows": len(pairs),
        "distinct_rows": len({engine.scorer.encoded.row(i).tobytes() for i in range(len(pairs))}),
        "repeats": repeats,
        "cpu_s": {arm: [round(r.cpu_s, 3) for r in runs] for arm, runs in arms.items()},
        "wall_s": {arm: [round(r.wall_s, 3) for r in runs] for arm, runs in arms.items()},
        "median_cost_cpu_percent": round(100 * (float(np.median(ratios_cpu)) - 1), 2),
        "median_cost_wall_percent": round(100 * (float(np.median(ratios_wall)) - 1), 2),
        "keys_cpu_s": round(keys_cpu_s, 4),
        "prepare_cpu_s": round(prepare_cpu_s, 4),
        "rewards_identical": same,
        "goal": {"target_percent": 2.0, "met": bool(np.median(ratios_cpu) - 1 <= 0.02)},
    }


def first_rows(pairs, count: int):
    """The first `count` rows of `pairs` (warm-ups, the bf16 rows of --quick)."""
    from rmeval.tasks import Pairs

    return Pairs(pairs.ids[:count], pairs.prompts[:count], pairs.responses[:count], None)


# --- comparison -----------------------------------------------------------------------------------
def compare_to_reference(result: RunResult, reference: np.ndarray) -> None:
    assert result.rewards is not None
    difference = np.abs(result.rewards - reference)
    scale = float(np.sqrt(np.mean(reference**2)))
    result.max_abs_diff_vs_a = float(difference.max())
    result.max_rel_diff_vs_a = float(np.max(difference / np.maximum(np.abs(reference), scale)))
    with np.errstate(divide="ignore", invalid="ignore"):
        result.max_pointwise_rel_diff_vs_a = float(np.nanmax(difference / np.abs(reference)))


def best_of(results: list[RunResult]) -> RunResult:
    return max(results, key=lambda result: result.tokens_per_s)


def format_table(results: list[RunResult]) -> str:
    lines = [f"{'run':<4}{'dtype':<10}{'policy':<44}{'tok/s':>9}{'cpu tok/s':>11}{'pad eff':>9}"
             f"{'max rel diff vs a':>19}{'wall s':>9}{'PSI%':>7}"]
    for r in results:
        diff = "reference" if r.max_rel_diff_vs_a is None else f"{r.max_rel_diff_vs_a:.2e}"
        psi = "-" if r.cpu_pressure_before is None else f"{r.cpu_pressure_before:.0f}"
        cpu_rate = r.real_tokens / r.cpu_s if r.cpu_s > 0 else float("nan")
        lines.append(f"{r.name:<4}{r.dtype:<10}{r.policy:<44}{r.tokens_per_s:>9.0f}{cpu_rate:>11.0f}"
                     f"{r.padding_efficiency:>9.3f}{diff:>19}{r.wall_s:>9.1f}{psi:>7}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="abstracts JSONL (default: $RMEVAL_SHARED_DATA or ../shared/data, "
                             f"{_models.ABSTRACTS_FILE})")
    parser.add_argument("--rows", type=int, default=2000, help="abstracts to score (seeded sample, file order)")
    parser.add_argument("--quick", action="store_true", help=f"smoke mode: {QUICK_ROWS} rows ({QUICK_BF16_ROWS} for bf16), one repeat")
    parser.add_argument("--repeats", type=int, default=1,
                        help="run (a), (b), (c) this many times in order and keep each run's fastest repeat")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--max-length", type=int, default=2048, help="truncation length for every run")
    parser.add_argument("--engine-budget", type=int, default=None,
                        help="engine token budget (default: the engine's CPU default)")
    parser.add_argument("--no-bf16", action="store_true", help="skip the bf16 rows")
    parser.add_argument("--engine-compile", action="store_true",
                        help="add a row: the engine with its model wrapped in torch.compile(dynamic=True) "
                             "(a candidate the engine does not have yet; compile time reported, not timed)")
    parser.add_argument("--dedup-ab", action="store_true",
                        help="time only the engine with and without deduplication, interleaved (see above)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where the built model is cached (default: ~/.cache/rmeval/bench-models)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = args.data or _models.default_abstracts_path()
    if data is None or not data.is_file():
        print("bench_scoring: abstracts not found; pass --data or set RMEVAL_SHARED_DATA", file=sys.stderr)
        return 2
    rows = QUICK_ROWS if args.quick else args.rows
    repeats = 1 if args.quick else max(1, args.repeats)

    import torch
    from rmeval.tasks import Pairs

    if args.threads:
        torch.set_num_threads(args.threads)
    build_started = time.perf_counter()
    model_dir = _models.ensure_model(data, args.cache_dir)
    build_s = time.perf_counter() - build_started
    papers = _models.sample_papers(_models.read_papers(data), rows)
    pairs = Pairs(ids=[p.id for p in papers], prompts=[m[0]["content"] for m in map(_models.chat_messages, papers)],
                  responses=[m[1]["content"] for m in map(_models.chat_messages, papers)], steps=None)

    if args.dedup_ab:
        engine = load_engine(model_dir, "float32", args.max_length, args.engine_budget)
        engine_run(engine, first_rows(pairs, QUICK_WARMUP_ROWS if args.quick else 8))
        summary = dedup_ab(engine, pairs, max(2, repeats))
        summary.update({"cpu": _runs.cpu_name(), "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
                        "token_budget": engine.token_budget})
        print(json.dumps(summary))
        return 0
    tokenizer, model = load_hf_model(model_dir, "float32")
    texts = [tokenizer.apply_chat_template(_models.chat_messages(p), tokenize=False) for p in papers]
    engine = load_engine(model_dir, "float32", args.max_length, args.engine_budget)
    n_params = sum(parameter.numel() for parameter in model.parameters())
    # Warm-up on a few rows so one-off kernel set-up is not charged to whichever run goes first.
    warmup = QUICK_WARMUP_ROWS if args.quick else 8
    one_at_a_time(tokenizer, model, texts[:min(2, warmup)], args.max_length)
    rewardbench_policy(tokenizer, model, texts[:warmup], args.max_length)
    engine_run(engine, first_rows(pairs, warmup))

    rounds: dict[str, list[RunResult]] = {"a": [], "b": [], "c": []}
    for _ in range(repeats):
        rounds["a"].append(timed("a", "one example at a time", "float32",
                                 lambda: one_at_a_time(tokenizer, model, texts, args.max_length)))
        rounds["b"].append(timed("b", "RewardBench: batch 8, dataset order, left pad", "float32",
                                 lambda: rewardbench_policy(tokenizer, model, texts, args.max_length)))
        rounds["c"].append(timed("c", f"rmeval engine: sorted, budget {engine.token_budget} tokens", "float32",
                                 lambda: engine_run(engine, pairs)))
    results = [best_of(rounds[name]) for name in ("a", "b", "c")]
    reference = results[0].rewards
    assert reference is not None
    compile_s = None
    if args.engine_compile:
        compile_started = time.perf_counter()
        engine.scorer.model = torch.compile(engine.scorer.model, dynamic=True)
        engine_run(engine, first_rows(pairs, 8))  # compiles
        compile_s = time.perf_counter() - compile_started
        results.append(timed("c", f"engine + torch.compile, budget {engine.token_budget} tokens", "float32",
                             lambda: engine_run(engine, pairs)))
    for result in results[1:]:
        compare_to_reference(result, reference)

    if not args.no_bf16:
        del engine, model
        n16 = min(QUICK_BF16_ROWS, len(texts)) if args.quick else len(texts)
        texts16 = texts[:n16]
        pairs16 = first_rows(pairs, n16)
        tokenizer16, model16 = load_hf_model(model_dir, "bfloat16")
        engine16 = load_engine(model_dir, "bfloat16", args.max_length, args.engine_budget)
        rewardbench_policy(tokenizer16, model16, texts[:warmup], args.max_length)
        engine_run(engine16, first_rows(pairs, warmup))
        for name, policy, work in (
            ("b", "RewardBench: batch 8, dataset order, left pad",
             lambda: rewardbench_policy(tokenizer16, model16, texts16, args.max_length)),
            ("c", f"rmeval engine: sorted, budget {engine16.token_budget} tokens",
             lambda: engine_run(engine16, pairs16)),
        ):
            result = timed(name, policy, "bfloat16", work)
            compare_to_reference(result, reference[:n16])
            results.append(result)

    a, b, c = results[:3]
    ratios = {"c_over_b": c.tokens_per_s / b.tokens_per_s, "c_over_a": c.tokens_per_s / a.tokens_per_s,
              "b_over_a": b.tokens_per_s / a.tokens_per_s}
    # The same ratios on process CPU time: steadier than wall time when other tenants load the machine.
    cpu_ratios = {"c_over_b": b.cpu_s / c.cpu_s, "c_over_a": a.cpu_s / c.cpu_s, "b_over_a": a.cpu_s / b.cpu_s}
    within = bool(b.max_rel_diff_vs_a <= REWARD_TOLERANCE and c.max_rel_diff_vs_a <= REWARD_TOLERANCE)
    # Other tenants (PSI "some" > threshold) slow runs unevenly, so wall ratios then compare different
    # machines; the goals are then judged on process CPU time (exact for --threads 1, no spinning threads).
    pressures = [p for r in results[:3] for p in (r.cpu_pressure_before, r.cpu_pressure_after) if p is not None]
    contended = bool(pressures and max(pressures) > CONTENDED_PSI)
    judged = cpu_ratios if contended else ratios
    goals = {key: {"target": target, "measured_wall": round(ratios[key], 3),
                   "measured_cpu_time": round(cpu_ratios[key], 3), "judged_on": "cpu_time" if contended else "wall",
                   "met": bool(judged[key] >= target and within)} for key, target in GOALS.items()}
    goals["fp32_rewards_within_1e-4"] = {"target": REWARD_TOLERANCE, "measured": max(b.max_rel_diff_vs_a,
                                         c.max_rel_diff_vs_a), "met": within}
    print(format_table(results))
    print(REWARDBENCH_CLI_NOTE)
    summary = {
        "benchmark": "bench_scoring",
        "quick": args.quick,
        "rows": len(texts),
        "repeats": repeats,
        "data": str(data),
        "model": {"params": n_params, "vocab_size": len(tokenizer), "dir": str(model_dir),
                  "build_or_cache_s": round(build_s, 2), "attn_implementation": "sdpa"},
        "device": "cpu",
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "max_length": args.max_length,
        "relative_diff": "max |r - r_a| / max(|r_a|, rms(r_a)); pointwise: max |r - r_a| / |r_a|",
        "runs": [result.row() for result in results],
        "ratios": {key: round(value, 3) for key, value in ratios.items()},
        "cpu_time_ratios": {key: round(value, 3) for key, value in cpu_ratios.items()},
        "engine_compile_s": None if compile_s is None else round(compile_s, 2),
        "goals": goals,
        "rewards_within_tolerance": within,
        "contended": contended,
        "max_cpu_pressure_avg10": max(pressures) if pressures else None,
        "rewardbench_cli": "not run: needs CUDA; policy re-implemented as run (b)",
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
