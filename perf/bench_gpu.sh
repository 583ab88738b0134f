#!/usr/bin/env bash
# GPU scoring benchmark for a lent GPU machine (runs in under 5 minutes on one H100/H200):
# builds a ~1B-parameter Llama reward model from a config (random init, bf16), scores 4000 real arXiv
# abstracts with (b) RewardBench's batching policy and (c) the rmeval engine, and prints tokens/s and
# MFU (2 * params * tokens / time / peak bf16 FLOP/s, peak detected from the device name) side by side.
# The last line of stdout is one JSON object.
#
#   bash perf/bench_gpu.sh prepare     # on the CPU box: copy the abstracts to results/bench/ (gitignored)
#   bash perf/bench_gpu.sh             # on the GPU box (carry results/bench with the tree)
#   bash perf/bench_gpu.sh cpu-check   # same code paths, tiny model on CPU, 32 rows (no GPU needed)
#   bash perf/bench_gpu.sh warm-server # cold vs warm model server on the GPU: scoring-stage wall and
#                                            # per-job start-up (perf/bench_warm_server.py --device cuda)
#   bash perf/bench_gpu.sh replicas    # one model server vs warm replicas on every GPU of the box: scoring-stage
#                                            # wall, per-job start-up, jobs per replica (perf/bench_replicas.py)
#   bash perf/bench_gpu.sh engines     # rmeval's transformers engine vs its vLLM engine vs RewardBench's pipeline
#                                            # loop in bf16: texts/s, tokens/s, MFU against the data-sheet peak,
#                                            # prefix-cache tokens, rewards against transformers (perf/bench_engines.py).
#                                            # Builds the vLLM environment first (`rmeval engine install vllm`:
#                                            # vllm on a GPU; ~/.cache/rmeval/vllm-env, kept for the next run):
#                                            # that needs the package registry (a few GB of wheels); on a machine
#                                            # without it, point RMEVAL_VLLM_ENV at an environment built before
#
# Abstracts come from $RMEVAL_SHARED_DATA or ../shared/data when present, else from the copy that
# `prepare` wrote under results/bench/ (never committed: results/ is gitignored).
# Environment: BENCH_ROWS (4000), BENCH_TIMEOUT_S (290), BENCH_PEAK_TFLOPS (override the peak).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-gpu}"
abstracts_name="arxiv/arxiv_balanced_by_archive_max500.jsonl"
carried="results/bench/gpu_abstracts.jsonl"
shared="${RMEVAL_SHARED_DATA:-$(pwd)/../shared/data}"

find_abstracts() {
  if [ -f "$shared/$abstracts_name" ]; then
    echo "$shared/$abstracts_name"
  elif [ -f "$carried" ]; then
    echo "$carried"
  else
    echo "bench_gpu.sh: no abstracts: set RMEVAL_SHARED_DATA, or run 'bash perf/bench_gpu.sh prepare'" \
      "where the shared data is and carry results/bench with the tree" >&2
    return 1
  fi
}

# A mode that needs the GPU: stop (exit 2) with `hint` where there is none; else name the GPU (with any extra
# nvidia-smi fields) and make sure rmeval is importable.
require_gpu() {
  local hint="$1" extra="${2:+,$2}"
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "bench_gpu.sh: no NVIDIA GPU here; $hint" >&2
    exit 2
  fi
  nvidia-smi --query-gpu="name,memory.total$extra" --format=csv,noheader >&2
  python -c "import rmeval" 2>/dev/null || python -m pip install -q -e . >&2
}

case "$mode" in
  prepare)
    source_file="$shared/$abstracts_name"
    [ -f "$source_file" ] || { echo "bench_gpu.sh prepare: $source_file not found" >&2; exit 1; }
    mkdir -p "$(dirname "$carried")"
    cp "$source_file" "$carried.tmp" && mv "$carried.tmp" "$carried"
    echo "wrote $carried ($(wc -l < "$carried") abstracts); carry results/bench to the GPU machine"
    ;;
  cpu-check)
    data="$(find_abstracts)"
    workdir="$(mktemp -d)"
    trap 'rm -rf "$workdir"' EXIT
    python perf/_gpu_bench.py --data "$data" --rows 32 --size tiny --device cpu --workdir "$workdir"
    ;;
  gpu)
    data="$(find_abstracts)"
    require_gpu "use 'bash perf/bench_gpu.sh cpu-check' to check the code" "clocks.max.sm"
    workdir="${BENCH_WORKDIR:-$(mktemp -d)}"
    peak_args=()
    if [ -n "${BENCH_PEAK_TFLOPS:-}" ]; then peak_args=(--peak-tflops "$BENCH_PEAK_TFLOPS"); fi
    timeout "${BENCH_TIMEOUT_S:-290}" python perf/_gpu_bench.py --data "$data" --rows "${BENCH_ROWS:-4000}" \
      --size 1b --device cuda --workdir "$workdir" "${peak_args[@]}"
    ;;
  warm-server)
    data="$(find_abstracts)"
    require_gpu "'python perf/bench_warm_server.py' measures the CPU path"
    # 8 groups x BENCH_PAPERS papers, 2 models, each job asks for one GPU (bf16); cold first, then warm.
    timeout "${BENCH_TIMEOUT_S:-540}" python perf/bench_warm_server.py --device cuda --abstracts "$data" \
      --papers "${BENCH_PAPERS:-200}" --cores "${BENCH_CORES:-8}" --threads 2
    ;;
  replicas)
    data="$(find_abstracts)"
    require_gpu "'python perf/bench_replicas.py' measures the CPU path on fake GPUs"
    # One model (bf16, one GPU per job), 8 groups x BENCH_PAPERS papers: max_replicas 1 first, then as many as fit.
    # On a one-GPU machine both modes have one server (the replica mode then checks the path, not the gain).
    timeout "${BENCH_TIMEOUT_S:-540}" python perf/bench_replicas.py --device cuda --abstracts "$data" \
      --papers "${BENCH_PAPERS:-200}" --threads 2
    ;;
  engines)
    data="$(find_abstracts)"
    require_gpu "'python perf/bench_engines.py --size tiny' checks the CPU path"
    rmeval engine install vllm >&2
    # 125M parameters, BENCH_PROMPTS x 6 responses, bf16 on one GPU; the vLLM server's start-up is reported apart.
    RMEVAL_VLLM_ARGS="${RMEVAL_VLLM_ARGS:---gpu-memory-utilization 0.8}" \
      timeout "${BENCH_TIMEOUT_S:-540}" python perf/bench_engines.py --device cuda --dtype bfloat16 --threads 8 \
      --abstracts "$data" --prompts "${BENCH_PROMPTS:-600}" --responses 6
    ;;
  *)
    echo "usage: bash perf/bench_gpu.sh [gpu|prepare|cpu-check|warm-server|replicas|engines]" >&2
    exit 2
    ;;
esac
