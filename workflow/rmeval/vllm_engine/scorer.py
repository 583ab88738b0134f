"""`VllmScorer`: the sequence-classification adapter's input, scored by a vLLM server.

Parity with the transformers engine, by construction:
- the ids are the adapter's own (`prepare` is SequenceClassificationScorer's: chat template, BOS policy, truncation
  to max_length, a benchmark's pipeline input), so `Prepared` (costs, token counts, truncation flags, the keys that
  deduplicate identical inputs) is the same and the engine plans, checkpoints and deduplicates the same;
- vLLM gets token ids, never text: no second tokenisation, no doubled BOS;
- transformers' head reads the reward at each row's last token that is not the pad id (a row ending in that id is
  read before it, as in the official RewardBench pipeline); the pooling runner reads the last token it gets, so each
  row is sent up to and including that position: causal attention makes the logit there the same;
- a first token the input hides from attention (RewardBenchPipeline's doubled BOS) is not sent: with rotary
  positions, attention depends on position differences only, so dropping it equals masking it (up to fp rounding);
- `use_activation: false`: the raw logit 0, as transformers' `logits[:, 0]`.
vLLM runs the forward pass with its own kernels: rewards agree with transformers' within fp rounding (measured on
CPU fp32: CONTRIBUTING.md, "The vLLM engine"), not bit for bit; copies of one input still tie exactly (the engine
scores one and copies it).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.models.base import BatchScores, Runtime
from rmeval.models.chat import unused_token_id
from rmeval.models.hf import model_revision
from rmeval.models.sequence_classification import SequenceClassificationScorer
from rmeval.registry import ModelSpec
from rmeval.vllm_engine import http
from rmeval.vllm_engine.process import ServerOptions, VllmProcess

LOG_DIR_ENV = "RMEVAL_VLLM_LOG_DIR"
LOG_DIR = Path(".snakemake") / "rmeval-vllm"  # under the run's working directory, beside the model servers' logs


def server_log(name: str) -> Path:
    folder = Path(os.environ.get(LOG_DIR_ENV) or LOG_DIR)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:40]
    return (folder / f"{safe}-{os.getpid()}.log").resolve()


def device_statement(options: ServerOptions, asked_gpus: int) -> str:
    """Where the server runs, said plainly: GPUs an allocation grants but CUDA cannot see (a count-only gres, a CPU
    torch) are named as unused, never claimed."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if options.device == "cuda":
        return f"CUDA, tensor parallel {options.tensor_parallel} (CUDA_VISIBLE_DEVICES={visible})"
    unused = f"; the {asked_gpus} GPU(s) asked for stay unused: torch sees no CUDA device (CUDA_VISIBLE_DEVICES=" \
        f"{visible})" if asked_gpus else ""
    return f"the CPU, tensor parallel 1, {options.threads or 'all'} thread(s){unused}"


class VllmScorer(SequenceClassificationScorer):
    """Tokenises like the transformers adapter; runs the forward passes in a vLLM server (started, or at a URL)."""

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        import requests
        from transformers import AutoConfig

        self.spec = spec
        self.runtime = runtime
        self.padding_side = self.default_padding_side  # rows are sent unpadded: no side to choose
        self.load_revision, self.revision = model_revision(spec)
        self.tokenizer = self._load_tokenizer()
        config = AutoConfig.from_pretrained(spec.path, revision=self.load_revision,
                                            trust_remote_code=spec.trust_remote_code)
        self.vocab_size = int(config.vocab_size)
        self.architecture = "/".join(getattr(config, "architectures", None) or ["?"])
        config_pad = getattr(config, "pad_token_id", None)
        self.pad_from_config = isinstance(config_pad, int)
        self.pad_id = next((c for c in (config_pad, self.tokenizer.pad_token_id, self.tokenizer.eos_token_id)
                            if isinstance(c, int)), None)
        if self.pad_id is None:
            raise RmevalError(f"model {spec.name!r}: no pad, eos or config pad token id (the transformers head needs "
                              "one to find each row's last token)")
        self.encoded = None
        self.tokenization = {}
        self.session = requests.Session()
        self.server: VllmProcess | None = None
        self.url = spec.vllm_url
        if self.url is None:
            self.server = self._start_server()
            self.url = self.server.url
            self.served = "rmeval"
        else:
            self.served, _ = http.served_model(self.session, self.url, spec.name)
        self.sent_tokens = 0

    def _start_server(self) -> VllmProcess:
        from rmeval.vllm_engine.environment import build_problem, find_environment

        environment = find_environment()
        cuda = self.runtime.device != "cpu"
        problem = build_problem(environment.build, cuda, environment.path)
        if problem is not None:
            raise RmevalError(problem)
        threads = None
        if not cuda:
            import torch

            threads = torch.get_num_threads()  # the job's --threads (rmeval.scoring.request.resolve_runtime)
        options = ServerOptions(model=self.spec.path, revision=self.load_revision, dtype=self.runtime.dtype,
                                tensor_parallel=max(1, self.spec.resources.gpu) if cuda else 1,
                                device="cuda" if cuda else "cpu", threads=threads,
                                trust_remote_code=self.spec.trust_remote_code)
        print(f"rmeval score: vLLM for {self.spec.name!r}: {device_statement(options, self.spec.resources.gpu)}",
              file=sys.stderr, flush=True)
        server = VllmProcess(environment, options, server_log(self.spec.name), self.spec.name)
        server.start()
        return server

    def _keep_pad_out_of_rows(self) -> None:
        # As the transformers adapter: a config without pad_token_id pads with an id no row holds, so every row is
        # read at its last token (here: every row is sent whole).
        assert self.encoded is not None
        preferred = [self.pad_id, self.tokenizer.pad_token_id, self.tokenizer.unk_token_id]
        self.pad_id = unused_token_id(self.encoded.flat_ids, preferred, self.vocab_size)

    def prepare(self, pairs):  # noqa: ANN001, ANN201 - the adapter's; the counters mark this job's start
        prepared = super().prepare(pairs)
        # The server's counters are cumulative over its jobs (a model server's jobs share it): this job's share is
        # what they gain from here (rmeval.scoring.server copies the scorer per job, so this is per job).
        self.counters_at_start = http.prefix_cache_counts(self.session, self.url)
        return prepared

    # --- scoring -----------------------------------------------------------------------------
    def request_ids(self, index: int) -> list[int]:
        """Row `index`'s ids as vLLM gets them: up to the token transformers' head reads, less a hidden first token."""
        assert self.encoded is not None, "prepare() must run before score()"
        ids = self.encoded.row(index)
        kept = np.flatnonzero(ids != self.pad_id)
        end = int(kept[-1]) + 1 if len(kept) else 1  # transformers' argmax over no kept token reads position 0
        start = 1 if self.encoded.hidden_first is not None and self.encoded.hidden_first[index] and end > 1 else 0
        return ids[start:end].tolist()

    def score(self, indices: np.ndarray) -> BatchScores:
        if self.server is not None and not self.server.alive():
            # It died under an earlier job of this model server (that job kept its checkpoint): start it again.
            print(f"rmeval score: the vLLM server for {self.spec.name!r} had stopped; restarting it", file=sys.stderr,
                  flush=True)
            self.server.start()
            self.url = self.server.url
        rows = [self.request_ids(int(i)) for i in indices]
        classified = http.classify(self.session, self.url, self.served, rows, self.spec.name)
        sent = sum(len(row) for row in rows)
        if classified.prompt_tokens and classified.prompt_tokens != sent:
            raise RmevalError(f"engine vllm: the server for {self.spec.name!r} counted {classified.prompt_tokens} "
                              f"prompt tokens for the {sent} ids sent (did it add special tokens?)")
        self.sent_tokens += sent
        return BatchScores(rewards=classified.logits)

    def is_out_of_memory(self, error: BaseException) -> bool:
        return False  # vLLM schedules within its own memory

    def after_out_of_memory(self) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        from rmeval.vllm_engine.environment import environment_path

        server = self.server
        engine: dict[str, Any] = {"name": "vllm", "url": self.url, "served_model": self.served,
                                  "started_by_rmeval": server is not None, "tokens_sent": self.sent_tokens}
        start = getattr(self, "counters_at_start", None)
        if start is not None:  # after prepare: this job's prompt tokens, and those the prefix cache served
            now = http.prefix_cache_counts(self.session, self.url)
            # (a server restarted since counts from zero again)
            engine.update({key: now[key] - start.get(key, 0.0) if now[key] >= start.get(key, 0.0) else now[key]
                           for key in now})
        if server is not None:
            engine.update({"environment": str(environment_path()), "vllm": server.environment.record.get("vllm"),
                           "pid": server.process.pid if server.process is not None else None, "log": str(server.log),
                           "ready_s": round(server.ready_s, 1), "starts": server.starts,
                           "device": server.options.device, "build": server.environment.build,
                           "tensor_parallel_size": server.options.tensor_parallel,
                           "where": device_statement(server.options, self.spec.resources.gpu)})
        return {
            "revision": self.revision,
            "dtype": self.runtime.dtype,
            "device": f"vllm ({'cpu' if self.runtime.device == 'cpu' else 'cuda'})",
            "n_gpus": self.runtime.n_gpus,
            "padding_side": None,
            "attn_implementation": None,  # vLLM's own kernels; the entry's applies to the transformers engine
            "pad_token_id": self.pad_id,
            "model_class": self.architecture,
            "engine": engine,
            "engine_version": f"vllm {engine.get('vllm') or self._server_version()}",
            **self.tokenization,
        }

    def _server_version(self) -> str:
        try:
            return str(self.session.get(f"{self.url}/version", timeout=(http.CONNECT_S, 30)).json()["version"])
        except Exception:  # noqa: BLE001 - a record, never a reason to fail a job
            return "unknown"

    def close(self) -> None:
        if self.server is not None and self.server.process is not None:
            pid = self.server.process.pid
            self.server.stop()
            print(f"rmeval score: stopped the vLLM server for {self.spec.name!r} (pid {pid}, its engine cores with it)",
                  file=sys.stderr, flush=True)
        self.session.close()
