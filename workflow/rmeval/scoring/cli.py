"""`rmeval score`: score one input table with one reward model.

    rmeval score --spec '<ModelSpec JSON>' --task fairness --input results/data/physics.parquet \
        --output results/scores/M/physics.parquet --meta results/scores/M/physics.meta.json --threads 2

GPUs are claimed (rmeval.devices.claim_gpus) before torch is imported and held for the whole job.
Inside a local Snakemake run (`RMEVAL_RUN` set by the Snakefile, no Slurm) a local model is scored
through the run's model server instead (rmeval.scoring.server): loaded once per model, it holds the
GPUs, and this job only plans batches, checkpoints and writes its outputs. `--no-server` opts out.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path

from rmeval import cli_settings
from rmeval.config_check import schema_default
from rmeval.devices import GpuClaim
from rmeval.registry import ModelSpec
from rmeval.scoring.request import DEFAULT_TOKEN_BUDGET
from rmeval.scoring.spec_argument import read_spec
from rmeval.tasks import task_names


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {number}")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval score", description="Score one input table with one reward model.")
    parser.add_argument("--spec", required=True, help="the model's registry entry as JSON (or @file.json)")
    parser.add_argument("--task", required=True, choices=task_names(),
                        help="pairs: id/prompt/response[/steps]; or a benchmark's own (its catalogue's `tasks`)")
    parser.add_argument("--input", required=True, type=Path, help="input table (.parquet, .jsonl or .csv)")
    parser.add_argument("--output", required=True, type=Path, help="scores parquet to write")
    parser.add_argument("--meta", type=Path, help="metadata sidecar (default: OUTPUT with .meta.json)")
    parser.add_argument("--threads", type=_positive, help="torch CPU threads (the rule's threads:)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="auto: CUDA when the model asks for GPUs and one is visible, else CPU")
    parser.add_argument("--token-budget", type=_positive, default=schema_default("scoring.token_budget"),
                        help="padded tokens per batch (default: " + ", ".join(f"{n} on {d}" for d, n in DEFAULT_TOKEN_BUDGET.items())
                        + "; requests per batch for API models)")
    parser.add_argument("--max-batch-rows", type=_positive, default=schema_default("scoring.max_batch_rows"),
                        help="cap on rows per batch (default %(default)s)")
    parser.add_argument("--checkpoint-every", type=int, default=schema_default("scoring.checkpoint_every"),
                        help="rows between checkpoints in OUTPUT.partial/ (0 disables; default %(default)s)")
    parser.add_argument("--padding-side", choices=("left", "right"),
                        help="override the adapter's padding side (for checks; results must not change)")
    parser.add_argument("--compile", action="store_true", default=schema_default("scoring.compile"),
                        help="torch.compile the model (dynamic shapes); compile costs ~30 s, pays off above ~100k tokens")
    parser.add_argument("--expect-revision",
                        help="from a lock: fail before scoring unless the loaded commit / fingerprint is this")
    parser.add_argument("--server", dest="server", action="store_true", default=None,
                        help="score through the run's model server (default inside a local Snakemake run)")
    parser.add_argument("--no-server", dest="server", action="store_false",
                        help="load the model in this process (default outside Snakemake, under Slurm, for API models)")
    parser.add_argument("--max-replicas", type=_positive, default=schema_default("scoring.max_replicas"),
                        help="warm replicas of the model's server at most, one per free GPU set (default: as many as fit)")
    parser.add_argument("--model-input", type=lambda text: cli_settings.json_object(text, "rmeval score --model-input"),
                        help="a benchmark's way to build model input, as JSON (rmeval.tasks.ModelInput: style, "
                             "max_length, truncation_side); default: the registry entry's template and truncation")
    parser.add_argument("--progress-every", type=float, help="seconds between progress lines (default 15, 0.5 on a TTY)")
    cli_settings.add_settings_argument(parser)
    return parser


def wants_server(spec: ModelSpec, flag: bool | None, environ: Mapping[str, str] | None = None) -> bool:
    """Score through a model server? API models and baselines (nothing to load) never; else `--server/--no-server`, else inside a Snakemake run
    (RMEVAL_RUN set): locally, or under Slurm inside a model's allocation (`scoring.slurm_grouping: model`, whose
    jobstep sets RMEVAL_SLURM_SERVER), not in a per-job allocation, which loads the model once anyway."""
    from rmeval.devices import under_slurm
    from rmeval.scoring.address import RUN_ENV
    from rmeval.scoring.slurm_group import ALLOCATION_SERVER_ENV

    environ = os.environ if environ is None else environ
    if not spec.adapter_entry.loads_model:
        return False
    if flag is not None:
        return flag
    if not environ.get(RUN_ENV):
        return False
    return not under_slurm(environ) or bool(environ.get(ALLOCATION_SERVER_ENV))


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    spec = read_spec(args.spec)
    meta = args.meta or args.output.with_name(args.output.name.removesuffix(".parquet") + ".meta.json")
    from rmeval.devices import claim_gpus
    from rmeval.scoring.client import requested_gpus

    use_server = wants_server(spec, args.server)
    if use_server and os.environ.get("SLURM_JOB_ID"):
        # The job's own GPUs are claimed by the server; the log still names the allocation it ran in.
        print(f"Slurm job {os.environ['SLURM_JOB_ID']}: scoring through this allocation's model server",
              file=sys.stderr, flush=True)
    # The server claims the GPUs (it holds the model); an API model or a baseline needs none.
    gpus = 0 if use_server or not spec.adapter_entry.loads_model else requested_gpus(spec.resources.gpu, args.device)
    # Claim before torch is imported: CUDA reads CUDA_VISIBLE_DEVICES once, at initialisation.
    with claim_gpus(gpus) if not use_server else nullcontext(GpuClaim((), "cpu")) as claim:
        from rmeval.scoring.job import JobRequest, run_job

        request = JobRequest(
            spec=spec,
            task=args.task,
            input=args.input,
            output=args.output,
            meta=meta,
            threads=args.threads,
            device=args.device,
            token_budget=args.token_budget,
            max_batch_rows=args.max_batch_rows,
            checkpoint_every=args.checkpoint_every,
            padding_side=args.padding_side,
            progress_every_s=args.progress_every,
            compile=args.compile,
            expect_revision=args.expect_revision,
            gpu_devices=claim.devices,
            server=use_server,
            max_replicas=args.max_replicas,
            model_input=args.model_input,
        )
        run_job(request)
    return 0
