"""What the vLLM engine's tests share: whether the vLLM environment is here (else they skip, saying so), a tiny model
its CPU attention kernel takes (head_dim 64), and one server for a whole module (a start costs 12 s and more)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rmeval.vllm_engine.environment import ENV_VARIABLE, environment_path, python_of

VLLM_HEAD_DIM = 64  # vLLM's CPU attention refuses the default tiny model's head_dim 16


def vllm_skip_reason() -> str | None:
    path = environment_path()
    if python_of(path).is_file():
        return None
    return (f"no vLLM environment at {path} (${ENV_VARIABLE}): `rmeval engine install vllm` builds it (.ci/run does; "
            "3.3 min on a 2-core CPU)")


requires_vllm = pytest.mark.skipif(vllm_skip_reason() is not None, reason=vllm_skip_reason() or "")


def vllm_model(folder: Path, seed: int = 0) -> Path:
    """A tiny Llama-3-layout classifier (tests/tokenizer_layouts.py): its tokenizer adds BOS and its template writes
    one (the official RewardBench input then holds two and hides the first), and its config's pad id is the EOS
    `<|eot_id|>` that ends every rendered conversation, so transformers' head reads each reward one token before
    the row's end (as FsfairX-style configs do). Seeded: the same folder every time."""
    from tokenizer_layouts import save_llama3_tokenizer, save_tiny_model
    from transformers import AutoTokenizer

    save_llama3_tokenizer(folder)
    eot = AutoTokenizer.from_pretrained(folder).convert_tokens_to_ids("<|eot_id|>")
    return save_tiny_model(folder, "llama", seed=seed, pad_token_id=eot, head_dim=VLLM_HEAD_DIM)


def started_server(model: Path, log: Path) -> Iterator[str]:
    """A `vllm serve` of `model` on the CPU in fp32, as rmeval starts one; yields its URL, stops it after."""
    from rmeval.vllm_engine.environment import find_environment
    from rmeval.vllm_engine.process import ServerOptions, VllmProcess

    options = ServerOptions(model=str(model), revision=None, dtype="float32", tensor_parallel=1, device="cpu",
                            threads=2)
    server = VllmProcess(find_environment(), options, log, "parity")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def group_members(group: int) -> list[int]:
    """Live processes of process group `group`: a vLLM server runs in its own session, its engine cores (named
    VLLM::EngineCore, not after the model) with it."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, ...
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry.name))
    return found
