"""One scoring job: input file + model spec -> scores parquet + metadata sidecar.

Runs after the GPUs are claimed (see rmeval.scoring.cli), so importing torch here is safe. With
`server=True` the model lives in the run's model server (rmeval.scoring.server), which holds the GPUs,
and this process imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rmeval.io.hashing import sha256_file, sha256_text
from rmeval.lock.models import check_loaded_attn, check_loaded_revision
from rmeval.models.base import Runtime
from rmeval.scoring.request import (  # noqa: F401  (the job's request, re-exported for its callers)
    DEFAULT_API_BATCH,
    DEFAULT_TOKEN_BUDGET,
    JobRequest,
    load_local_scorer,
    resolve_runtime,
)


def fingerprint(request: JobRequest, input_sha256: str, runtime: Runtime, input_ids_sha256: str = "") -> str:
    """What must match for a checkpoint to be resumed (not the budget: see batching.py). `input_ids_sha256`
    (the token ids the adapter feeds) keeps a resume from mixing rows tokenised two ways."""
    device_kind = "cpu" if runtime.device == "cpu" else runtime.device
    parts = [input_sha256, request.task, request.spec.to_json(), runtime.dtype, device_kind, str(request.padding_side)]
    if request.model_input:
        parts.append(json.dumps(request.model_input, sort_keys=True))
    if input_ids_sha256:
        parts.append(input_ids_sha256)
    return sha256_text("\n".join(parts))


def _versions() -> dict[str, str]:
    import importlib.metadata as metadata

    versions = {"python": platform.python_version()}
    for package in ("rmeval", "torch", "transformers", "tokenizers", "flash-attn", "requests"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return versions


def process_age_s() -> float | None:
    """Seconds since this process started (from /proc), so start-up includes interpreter and imports."""
    import os

    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return uptime - ticks / os.sysconf("SC_CLK_TCK")


def check_revision_before_loading(request: JobRequest) -> None:
    """A lock's fingerprint (local folder) or commit (hub cache) is compared before the model loads: a changed
    7B model fails in a second, not after minutes of loading (or a model server started for nothing). The loaded
    scorer's revision is compared again after loading; remote (API) models and baselines have only that check."""
    from rmeval.models.catalogue import ADAPTERS

    adapter = ADAPTERS.get(request.spec.adapter)
    if not request.expect_revision or adapter is None or not adapter.loads_model:
        return
    from rmeval.models.hf import model_revision

    check_loaded_revision(request.spec.name, request.expect_revision, model_revision(request.spec)[1], found="found")


def run_job(request: JobRequest) -> dict[str, Any]:
    """Score one input file; write the parquet and the meta sidecar atomically; return the meta."""
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
    from rmeval.scoring.checkpoint import Checkpoint
    from rmeval.scoring.engine import EngineSettings, score_rows
    from rmeval.tasks import load_pairs

    started_wall = time.monotonic()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    pairs = load_pairs(request.input, request.task)
    if request.model_input:
        from dataclasses import replace

        from rmeval.tasks import ModelInput

        pairs = replace(pairs, model_input=ModelInput.from_mapping(request.model_input, "rmeval score --model-input"))
    input_sha256 = sha256_file(request.input)
    server_meta: dict[str, Any] | None = None
    check_revision_before_loading(request)
    if request.server:
        from rmeval.scoring.client import open_remote_scorer

        scorer, runtime, load_s, server_meta = open_remote_scorer(request)
    else:
        runtime = resolve_runtime(request)
        scorer, load_s = load_local_scorer(request, runtime)
    try:
        if request.expect_revision:  # a lock names the commit / fingerprint this job must load
            check_loaded_revision(request.spec.name, request.expect_revision, scorer.describe().get("revision"))
        check_loaded_attn(request.spec, scorer.describe().get("attn_implementation"))
        prepare_started = time.monotonic()
        prepared = scorer.prepare(pairs)
        prepare_s = time.monotonic() - prepare_started
        startup_s = process_age_s()
        if scorer.budget_unit == "tokens":
            budget = request.token_budget or DEFAULT_TOKEN_BUDGET["cpu" if runtime.device == "cpu" else "cuda"]
        else:
            budget = request.token_budget or DEFAULT_API_BATCH
        settings = EngineSettings(
            token_budget=budget,
            max_batch_rows=request.max_batch_rows,
            checkpoint_every=request.checkpoint_every,
            progress_every_s=request.progress_every_s,
        )
        ids_sha256 = str(getattr(scorer, "tokenization", {}).get("input_ids_sha256", ""))
        checkpoint = Checkpoint(request.output, fingerprint(request, input_sha256, runtime, ids_sha256))
        table, report = score_rows(scorer, pairs, prepared, settings, checkpoint, request.spec.name)
        table = scorer.finish_output(table)
        description = scorer.describe()
        description.update(scorer.summarize_output(table))
    finally:
        scorer.close()

    wall_s = time.monotonic() - started_wall
    tokens = int(table["n_tokens"].sum())
    meta: dict[str, Any] = {
        "model": request.spec.name,
        "adapter": request.spec.adapter,
        "path": request.spec.path,
        "revision_requested": request.spec.revision,
        "revision": description.pop("revision"),
        "dtype": description.pop("dtype"),
        "device": description.pop("device"),
        "task": request.task,
        "input": str(request.input),
        "input_sha256": input_sha256,
        "rows": int(len(table)),
        # Distinct model inputs (token sequences) among the rows: each scored once, its reward given to every copy.
        "distinct_sequences": int(report.distinct_rows),
        "tokens": tokens,
        "n_truncated": int(table["truncated"].sum()),
        "max_length": request.spec.max_length,
        "truncation": request.spec.truncation,
        "wall_s": round(wall_s, 3),
        "load_s": round(load_s, 3),
        "prepare_s": round(prepare_s, 3),
        # Process start to the first forward pass: interpreter, imports, model load or server connect, prepare.
        "startup_s": round(startup_s, 3) if startup_s is not None else None,
        "model_server": server_meta,
        "score_s": round(report.score_s, 3),
        # Throughput of the forward passes this run did (resumed rows are not re-counted).
        "tokens_per_s": round(report.scored_tokens / report.score_s, 1) if report.score_s > 0 else None,
        "rows_per_s": round(report.scored_rows / report.score_s, 2) if report.score_s > 0 else None,
        "batch_budget": report.token_budget,
        "compiled": request.compile,
        "batch_budget_final": report.token_budget_final,
        "batch_budget_unit": scorer.budget_unit,
        "max_batch_rows": request.max_batch_rows,
        "batches": report.batches,
        "oom_backoffs": report.oom_backoffs,
        "resumed_rows": report.resumed_rows,
        "threads": request.threads,
        "gpu_devices": list(server_meta["gpu_devices"] if server_meta else request.gpu_devices),
        "started_at": started_at,
        "versions": _versions(),
        "adapter_details": description,
    }
    # Parquet first, meta second: a meta file always describes a complete parquet beside it.
    write_parquet_atomic(table, request.output)
    write_json_atomic(meta, request.meta)
    checkpoint.clear()
    print(
        f"rmeval score: {request.spec.name}: {meta['rows']} rows, {tokens} tokens, {meta['n_truncated']} truncated, "
        f"{meta['wall_s']} s wall ({meta['tokens_per_s']} tok/s), budget {report.token_budget}"
        f"->{report.token_budget_final}, revision {meta['revision']} -> {request.output}",
        file=sys.stderr,
    )
    return meta
