"""`rmeval model-server`: one warm model per (run, model, settings), shared by that model's scoring jobs.

Started on demand by the first `rmeval score` job of a model (rmeval.scoring.client), never by hand.
It claims the model's GPUs (rmeval.devices), loads the adapter once and serves the jobs of the run
over a Unix socket, one thread per job. Each job keeps its own batching, OOM back-off, checkpoints
and metadata; the server only tokenises (`prepare`) and runs forward passes (`score`), one request
at a time, on a per-job copy of the adapter that shares the model and tokenizer.

Messages are pickled tuples over multiprocessing.connection: a request is (op, payload), a reply is
("ok", value), ("oom", text), ("rmeval", text), ("lost", text) (the engine behind it failed: the job keeps its
checkpoint) or ("crash", traceback); while a request runs the
session sends ("beat",) every second, so a job tells a busy server from a stopped one.

A model may run as several replicas (rmeval.scoring.replicas), each its own server process on its own GPU set;
a job's first message may be a probe (`{"probe": true}`), answered with the replica's load (jobs it serves) and
not counted as a job.

It exits when the run's Snakemake process is gone, after `--idle-s` seconds without a job, when it
is idle and another job waits for its GPUs, or on SIGTERM. The socket folder is 0700: only its
owner's jobs can connect, and a job must name the server's key in its first message.
"""

from __future__ import annotations

import argparse
import copy
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.scoring.address import ServerAddress, owner_alive, socket_name
from rmeval.scoring.memo import RewardMemo
from rmeval.scoring.protocol import DEFAULT_IDLE_S, PROTOCOL, hold_lock

BEAT_S = 1.0
WATCH_S = 0.25
YIELD_GRACE_S = 2.0  # idle this long and another job waits for our GPUs: hand them over


def _log(message: str) -> None:
    print(f"rmeval model-server [{time.strftime('%H:%M:%S')}]: {message}", file=sys.stderr, flush=True)


class StateFile:
    """`<key>.state`: pid and phase as JSON, its mtime refreshed every second while the process runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.document: dict[str, Any] = {"pid": os.getpid(), "phase": "starting", "protocol": PROTOCOL}
        self.write()
        thread = threading.Thread(target=self._beat, name="state-beat", daemon=True)
        thread.start()

    def write(self, **fields: Any) -> None:
        from rmeval.io.atomic import write_json_atomic

        self.document.update(fields)
        write_json_atomic(self.document, self.path)

    def _beat(self) -> None:
        while True:
            time.sleep(BEAT_S)
            try:
                os.utime(self.path)
            except OSError:
                pass


class ModelServer:
    def __init__(self, address: ServerAddress, scorer: Any, info: dict[str, Any], *, run_id: str, idle_s: float,
                 gpu_lock_dir: Path | None) -> None:
        self.address = address
        self.base = scorer
        self.info = info
        self.run_id = run_id
        self.idle_s = idle_s
        self.gpu_lock_dir = gpu_lock_dir
        self.compute = threading.Lock()  # one prepare / forward pass at a time: one model, one device
        self.memo = RewardMemo()  # one reward per distinct input across this server's jobs
        self.sessions_lock = threading.Lock()
        self.sessions = 0  # open connections (probes too): a server with one does not exit
        self.active = 0  # jobs being served: a replica's load
        self.served = 0
        self.closing = False
        self.last_activity = time.monotonic()

    # --- one job's connection --------------------------------------------------------------------
    def _handle(self, op: str, payload: Any, session: dict[str, Any]) -> Any:
        if op == "prepare":
            scorer = copy.copy(self.base)  # per-job encodings; model, tokenizer and weights are shared
            session["scorer"] = scorer
            started = time.monotonic()
            prepared = scorer.prepare(payload)
            session["keys"], session["remembered"] = prepared.keys, 0
            return {"prepared": prepared, "prepare_s": time.monotonic() - started}
        scorer = session.get("scorer")
        if op == "describe" and scorer is None:  # the loaded model (revision, dtype): a lock checks it before prepare
            return self.base.describe()
        if scorer is None:
            raise RmevalError(f"model server: {op!r} before 'prepare'")
        if op == "score":
            scores, remembered = self.memo.score(session.get("keys"), payload, scorer.score)
            session["remembered"] += remembered
            return scores
        if op == "describe":
            # Rows this job took from the server's memory of inputs its earlier jobs scored (rmeval.scoring.memo).
            return {**scorer.describe(), "rows_from_server_memory": session["remembered"]}
        raise RmevalError(f"model server: unknown request {op!r}")

    def _reply_for(self, error: BaseException, session: dict[str, Any]) -> tuple[str, str]:
        scorer = session.get("scorer") or self.base
        if scorer.is_out_of_memory(error):
            scorer.after_out_of_memory()
            return ("oom", str(error))
        if getattr(error, "keeps_checkpoint", False):  # what the model runs on failed (a vLLM server), not the data
            return ("lost", str(error))
        if isinstance(error, RmevalError):
            return ("rmeval", str(error))
        return ("crash", "".join(traceback.format_exception(error)))

    def session(self, conn: Any) -> None:
        """One job's connection (or a probe of this replica's load)."""
        send_lock = threading.Lock()
        busy = threading.Event()
        done = threading.Event()

        def beat() -> None:
            while not done.wait(BEAT_S):
                if busy.is_set():
                    try:
                        with send_lock:
                            conn.send(("beat",))
                    except OSError:
                        return

        state: dict[str, Any] = {}
        threading.Thread(target=beat, name="session-beat", daemon=True).start()
        try:
            op, payload = conn.recv()
            if op != "hello" or payload.get("key") != self.address.key or payload.get("protocol") != PROTOCOL:
                conn.send(("rmeval", "model server: wrong key or protocol; connect to your own run's server"))
                return
            if payload.get("probe"):
                with self.sessions_lock:
                    conn.send(("ok", {"active": self.active, "served": self.served, "pid": os.getpid()}))
                return
            with self.sessions_lock:
                self.active += 1
                self.served += 1
                number = self.served  # taken here: jobs connecting at once must not read one later count
                state["job"] = True
            with send_lock:
                conn.send(("ok", {**self.info, "sessions_served": number}))
            while True:
                op, payload = conn.recv()
                if op == "close":
                    return
                busy.set()
                try:
                    with self.compute:
                        reply: tuple[str, Any] = ("ok", self._handle(op, payload, state))
                except Exception as error:  # noqa: BLE001 - every failure goes back to the job that asked
                    reply = self._reply_for(error, state)
                finally:
                    busy.clear()
                with send_lock:
                    conn.send(reply)
        except (EOFError, OSError):
            pass  # the job ended or was killed; its checkpoint is its own business
        finally:
            done.set()
            try:
                conn.close()
            except OSError:
                pass
            with self.sessions_lock:
                self.sessions -= 1
                self.active -= 1 if state.get("job") else 0
                self.last_activity = time.monotonic()

    # --- lifetime ---------------------------------------------------------------------------------
    def _accept_loop(self, listener: Any) -> None:
        while True:
            try:
                conn = listener.accept()
            except OSError:
                if self.closing:
                    return
                continue
            with self.sessions_lock:
                if self.closing:
                    conn.close()
                    return
                self.sessions += 1
                self.last_activity = time.monotonic()
            threading.Thread(target=self.session, args=(conn,), name="session", daemon=True).start()

    def _exit_reason(self) -> str | None:
        """Why to exit now, or None. Only the end of the run stops a server that still has jobs."""
        if not owner_alive(self.run_id):
            return f"the run that started it ({self.run_id}) has ended"
        if self.sessions:
            return None
        idle = time.monotonic() - self.last_activity
        if idle >= self.idle_s:
            return f"idle for {idle:.0f} s"
        if self.gpu_lock_dir is not None and idle >= YIELD_GRACE_S:
            from rmeval.devices import gpu_waiters

            waiting = gpu_waiters(self.gpu_lock_dir)
            if waiting:
                return f"idle, and {waiting} job(s) wait for its GPUs"
        return None

    def serve(self) -> str:
        from multiprocessing.connection import Listener

        try:
            self.address.socket.unlink()  # a dead server's socket (its lock was free, so nobody listens)
        except FileNotFoundError:
            pass
        name, fd = socket_name(self.address.socket)
        listener = Listener(name, family="AF_UNIX", backlog=128)
        threading.Thread(target=self._accept_loop, args=(listener,), name="accept", daemon=True).start()
        _log(f"serving {self.info['model']!r} on {self.address.socket}")
        while True:
            time.sleep(WATCH_S)
            with self.sessions_lock:
                reason = self._exit_reason()
                if reason is not None:
                    self.closing = True
                    break
        try:
            self.address.socket.unlink()
        except FileNotFoundError:
            pass
        if fd is not None:
            os.close(fd)
        return reason


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval model-server",
                                     description="Serve one loaded reward model to a run's scoring jobs (started by `rmeval score`).")
    parser.add_argument("--spec", required=True, help="the model's registry entry as JSON")
    parser.add_argument("--directory", required=True, type=Path, help="the server folder (.snakemake/rmeval-servers)")
    parser.add_argument("--name", required=True, help="file-safe model name")
    parser.add_argument("--key", required=True, help="the server key (rmeval.scoring.address.server_key)")
    parser.add_argument("--run", required=True, help="the run id (RMEVAL_RUN) whose end stops the server")
    parser.add_argument("--gpus", type=int, default=0, help="GPUs to claim and hold")
    parser.add_argument("--replica", type=int, default=0, help="this server's replica index (0: the model's first)")
    parser.add_argument("--lock-fd", type=int, help="an inherited fd that already holds this server's .lock")
    parser.add_argument("--wait-lock-s", type=float, default=0.0,
                        help="wait this long for the .lock (the job that had it started us through the Slurm "
                             "launcher and lets go of it right away: rmeval.scoring.slurm_launcher)")
    parser.add_argument("--held-gpus", default="",
                        help="device ids whose locks the starting job claimed and handed over (with --held-fds)")
    parser.add_argument("--held-fds", default="", help="inherited fds holding the --held-gpus locks")
    parser.add_argument("--threads", type=int, help="torch CPU threads")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--padding-side", choices=("left", "right"))
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--idle-s", type=float, default=DEFAULT_IDLE_S, help="exit after this long without a job")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from rmeval.registry import ModelSpec

    spec = ModelSpec.from_json(args.spec)
    address = ServerAddress(args.name, args.key, args.directory, args.replica)
    address.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    if args.lock_fd is not None:  # the job that started us took the lock under the model's pool lock
        lock_fd = args.lock_fd
        os.set_inheritable(lock_fd, False)
    else:
        lock_fd = hold_lock(address.lock)
        deadline = time.monotonic() + args.wait_lock_s
        while lock_fd is None and time.monotonic() < deadline:
            time.sleep(0.05)
            lock_fd = hold_lock(address.lock)
    if lock_fd is None:
        _log(f"another server already holds {address.lock}; exiting")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: (_log("SIGTERM"), os._exit(143)))
    state = StateFile(address.state)
    started = time.monotonic()
    from rmeval.devices import adopt_gpus, claim_gpus, default_lock_dir

    state.write(phase="claiming GPUs", replica=args.replica)
    held = tuple(device for device in args.held_gpus.split(",") if device)
    fds = tuple(int(fd) for fd in args.held_fds.split(",") if fd)
    with adopt_gpus(held, fds) if held else claim_gpus(args.gpus) as claim:
        state.write(phase="loading", gpu_devices=list(claim.devices))
        from rmeval.scoring.request import JobRequest, load_local_scorer, resolve_runtime

        request = JobRequest(spec=spec, task="pairs", input=Path(os.devnull), output=Path(os.devnull),
                             meta=Path(os.devnull), threads=args.threads, device=args.device,
                             padding_side=args.padding_side, compile=args.compile, gpu_devices=claim.devices)
        runtime = resolve_runtime(request)
        scorer, load_s = load_local_scorer(request, runtime)
        info = {
            "model": spec.name,
            "pid": os.getpid(),
            "runtime": {"device": runtime.device, "dtype": runtime.dtype, "n_gpus": runtime.n_gpus,
                        "padding_side": runtime.padding_side},
            "has_steps": scorer.has_steps,
            "budget_unit": scorer.budget_unit,
            "load_s": round(load_s, 3),
            "gpu_devices": list(claim.devices),
            "log": str(address.log),
            "replica": args.replica,
            "server": address.server_id,
        }
        _log(f"loaded {spec.name!r} in {load_s:.1f} s on {runtime.device} ({runtime.dtype}); "
             f"{time.monotonic() - started:.1f} s since start")
        server = ModelServer(address, scorer, info, run_id=args.run, idle_s=args.idle_s,
                             gpu_lock_dir=default_lock_dir() if claim.devices else None)
        state.write(phase="ready", **{key: info[key] for key in ("load_s", "runtime")})
        reason = server.serve()
        state.write(phase="exiting", reason=reason)
        _log(f"exiting: {reason}; served {server.served} job(s)")
        # A model that runs in a process of its own (a vLLM server) stops here, before the GPU locks are let go, so
        # the next holder finds them free; the parent-death signal and the vLLM guardian are the fallback when this
        # process is killed.
        scorer.close()
    sys.stderr.flush()
    os._exit(0)  # session threads may still sit in recv(); nothing of theirs needs flushing
