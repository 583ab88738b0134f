"""What a scoring job asks for (`JobRequest`) and how its model is loaded in a process: the job itself, or the
model server it hands the loading to. Both rmeval.scoring.job and rmeval.scoring.server import this module; it
imports neither (the model adapters only inside the functions, after GPU claiming)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.config_check import schema_node
from rmeval.errors import RmevalError
from rmeval.models.base import Runtime
from rmeval.registry import ModelSpec
from rmeval.scoring.settings import SCORING_DEFAULTS

# token_budget: null -> the device's budget, written once in the schema (scoring.token_budget's x-device-budget)
DEFAULT_TOKEN_BUDGET: dict[str, int] = schema_node("scoring.token_budget")["x-device-budget"]
DEFAULT_API_BATCH = 64  # requests in flight per engine batch (concurrency is bounded separately)


@dataclass(frozen=True)
class JobRequest:
    spec: ModelSpec
    task: str
    input: Path
    output: Path
    meta: Path
    threads: int | None = None
    device: str = "auto"  # auto | cpu | cuda
    token_budget: int | None = SCORING_DEFAULTS.token_budget  # None: DEFAULT_TOKEN_BUDGET of the device
    max_batch_rows: int = SCORING_DEFAULTS.max_batch_rows
    checkpoint_every: int = SCORING_DEFAULTS.checkpoint_every
    padding_side: str | None = None
    progress_every_s: float | None = None
    gpu_devices: tuple[str, ...] = ()
    compile: bool = SCORING_DEFAULTS.compile  # wrap the model in torch.compile(dynamic=True): pays off on large jobs
    expect_revision: str | None = None  # from a lock: the commit / fingerprint the job must load
    server: bool = False  # score through the run's model server (loaded once per model) instead of in-process
    max_replicas: int | None = SCORING_DEFAULTS.max_replicas  # warm replicas of that server (None: as GPUs hold)
    # the benchmark's way to build model input (rmeval.tasks.ModelInput fields); None: the registry entry's
    model_input: dict[str, Any] | None = None


def resolve_runtime(request: JobRequest) -> Runtime:
    """Device and dtype for this job (torch is imported here, after GPU claiming)."""
    spec = request.spec
    if not spec.adapter_entry.loads_model:  # an endpoint, or a rule on the text (a baseline): no torch
        # the input table's path: published results name the data it was prepared from (its manifest beside it)
        return Runtime(device="api" if spec.adapter_entry.remote else "cpu", dtype="n/a", padding_side=None,
                       extra={"input": str(request.input)})
    import torch

    if request.threads:
        # Parallel Snakemake jobs share the CPU: follow the rule's `threads:` instead of all cores.
        torch.set_num_threads(request.threads)
    wants_gpu = request.device == "cuda" or (request.device == "auto" and spec.resources.gpu > 0)
    cuda = wants_gpu and torch.cuda.is_available()
    if request.device == "cuda" and not torch.cuda.is_available():
        raise RmevalError("--device cuda was requested but no CUDA device is visible to this job")
    n_gpus = torch.cuda.device_count() if cuda else 0
    device = ("auto-sharded" if spec.resources.gpu > 1 and n_gpus > 1 else "cuda") if cuda else "cpu"
    dtype = spec.dtype if spec.dtype != "auto" else ("bfloat16" if cuda else "float32")
    return Runtime(device=device, dtype=dtype, n_gpus=n_gpus, padding_side=request.padding_side)


def load_local_scorer(request: JobRequest, runtime: Runtime) -> tuple[Any, float]:
    """Load the adapter in this process (compiled when asked); returns (scorer, seconds)."""
    from rmeval.models import load_scorer

    started = time.monotonic()
    scorer = load_scorer(request.spec, runtime)
    if request.compile and getattr(scorer, "model", None) is not None:
        import torch

        # dynamic=True: batch shapes vary with the token budget; one compile serves them all.
        scorer.model = torch.compile(scorer.model, dynamic=True)
    return scorer, time.monotonic() - started
