"""Map a registry entry's resources onto Snakemake's standard resource names.

The names (gpu, gpu_model, mem_mb, runtime, slurm_partition) are the ones the SLURM executor
plugin understands; locally, `gpu` is counted against `--resources gpu=N`. Memory and
runtime grow with the attempt number so a retry after an out-of-memory or time-limit kill
asks for more. A job's runtime comes from what it will score once the model's throughput has been measured
(`scoring_runtime`), so a model's Slurm allocation asks for the sum of realistic estimates.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rmeval.registry import ModelSpec

# A job's time limit from what it will score: tokens at the model's measured throughput, twice over for safety
# (batches of mixed lengths, a slower node), and never below the floor (start-up, the model's load, the queue's
# rounding). Without a measurement the registry entry's `runtime` stands.
RUNTIME_FLOOR_MIN = 10
RUNTIME_SAFETY = 2.0
CHARS_PER_TOKEN = 4  # the usual ratio for English text with BPE tokenizers; the table's ids and labels count too


def scoring_resources(spec: ModelSpec, attempt: int = 1) -> dict[str, Any]:
    attempt = max(1, int(attempt))
    wanted = spec.resources
    resources: dict[str, Any] = {
        # an endpoint or a baseline needs no local GPU
        "gpu": int(wanted.gpu) if spec.adapter_entry.loads_model else 0,
        "mem_mb": int(wanted.mem_mb) * attempt,
        "runtime": int(wanted.runtime) * attempt,
        # Empty strings mean "not requested": a rule's resource keys are fixed for all its jobs.
        "gpu_model": wanted.gpu_model or "",
        "slurm_partition": wanted.slurm_partition or "",
    }
    return resources


def input_tokens(path: str | Path) -> int | None:
    """Roughly the tokens a scoring job will read: the characters of its input table's text columns (lists of
    steps included) over CHARS_PER_TOKEN. None when the table is not there yet or not parquet."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    except (OSError, ValueError, ImportError):
        return None
    chars = 0
    for column in table.columns:
        values = column.combine_chunks()
        while pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
            values = values.flatten()
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            chars += pc.sum(pc.utf8_length(values)).as_py() or 0
    return max(1, chars // CHARS_PER_TOKEN)


def measured_tokens_per_s(spec: ModelSpec, meta_paths: Iterable[str | Path]) -> float | None:
    """The model's throughput as its earlier jobs measured it (their `.meta.json`), on the device its jobs ask for
    (a GPU entry's jobs are not timed by a CPU test run): the median, or None when nothing was measured."""
    wants_gpu = scoring_resources(spec)["gpu"] > 0
    rates = []
    for path in meta_paths:
        try:
            meta = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        rate, device = meta.get("tokens_per_s"), str(meta.get("device") or "")
        if isinstance(rate, (int, float)) and rate > 0 and device.startswith("cuda") == wants_gpu:
            rates.append(float(rate))
    return statistics.median(rates) if rates else None


def scoring_runtime(spec: ModelSpec, tokens: int | None, tokens_per_s: float | None, attempt: int = 1) -> int:
    """Minutes for one scoring job: its tokens at the measured throughput (with the safety factor and the floor),
    else the registry entry's `runtime`; scaled by the attempt as the other resources are."""
    attempt = max(1, int(attempt))
    if not tokens or not tokens_per_s:
        return scoring_resources(spec, attempt)["runtime"]
    minutes = math.ceil(RUNTIME_SAFETY * tokens / tokens_per_s / 60)
    return max(RUNTIME_FLOOR_MIN, minutes) * attempt
