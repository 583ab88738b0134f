"""Map a registry entry's resources onto Snakemake's standard resource names.

The names (gpu, gpu_model, mem_mb, runtime, slurm_partition) are the ones the SLURM executor
plugin understands; locally, `gpu` is counted against `--resources gpu=N`. Memory and
runtime grow with the attempt number so a retry after an out-of-memory or time-limit kill
asks for more.
"""

from __future__ import annotations

from typing import Any

from rmeval.registry import ModelSpec


def scoring_resources(spec: ModelSpec, attempt: int = 1) -> dict[str, Any]:
    attempt = max(1, int(attempt))
    wanted = spec.resources
    resources: dict[str, Any] = {
        "gpu": 0 if spec.adapter_entry.remote else int(wanted.gpu),  # an endpoint needs no local GPU
        "mem_mb": int(wanted.mem_mb) * attempt,
        "runtime": int(wanted.runtime) * attempt,
        # Empty strings mean "not requested": a rule's resource keys are fixed for all its jobs.
        "gpu_model": wanted.gpu_model or "",
        "slurm_partition": wanted.slurm_partition or "",
    }
    return resources
