"""Warm replicas of a model's server: which one a job joins, and when a job starts another.

A model's jobs share its run's server (rmeval.scoring.server). On a workstation with free GPUs one server is a
queue: Snakemake admits as many GPU jobs as there are GPUs, and they wait on one model. So a job that finds every
replica busy starts a further one on a GPU set that is free right now, up to `scoring.max_replicas` (default: as
many as the GPUs hold, `len(GPUs) // resources.gpu`); otherwise it joins the least-loaded replica.

The race-free path: the whole decision is taken under the model's pool lock (the `.spawn` flock of
rmeval.scoring.address), and under it
- the load of each ready replica is asked of the replica itself (a probe; its count of jobs in service);
- a job that joins a ready replica finishes its handshake before it lets go, so the next job sees that load;
- a job that starts a further replica takes that replica's GPU locks itself (all-or-nothing, never waiting,
  `rmeval.devices.claim_free_now`) and hands the locked fds to the server process, so no GPU is ever claimed twice
  and a server that dies frees its GPUs through the kernel as before. When every GPU is held, the job first stands
  as a GPU waiter for a moment (`rmeval.devices.claim_after_nudge`): servers of other models idle for their grace
  period hand theirs over, as they do for any waiting job. The first replica may wait for its GPUs (and tells idle
  servers of other models to hand theirs over), as a lone server does.
A replica still starting counts as one job (the one that started it). Replicas stop as servers do: the run's end,
idle for `RMEVAL_SERVER_IDLE_S`, or idle for 2 s while a job of another model waits for GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

STARTING_LOAD = 1  # a replica being loaded already has the job that started it


@dataclass(frozen=True)
class Replica:
    """What the pool lock's holder saw of one replica index."""

    index: int
    status: str  # "ready" (answered a probe), "starting" (its lock held, not serving yet), "gone" (exiting), "free"
    load: int = 0  # jobs it serves (ready); STARTING_LOAD while starting


@dataclass(frozen=True)
class Decision:
    action: str  # "join" a ready replica, "wait" for a starting one, "start" one, "retry" (all exiting: look again)
    index: int


def replica_limit(max_replicas: int | None, gpus_per_server: int, gpu_pool: int) -> int:
    """How many replicas a model may have: one without GPUs (CPU servers share the cores, a copy gains nothing),
    else as many whole GPU sets as the pool holds, capped by `scoring.max_replicas`."""
    if gpus_per_server < 1 or gpu_pool < gpus_per_server:
        return 1
    fit = gpu_pool // gpus_per_server
    return max(1, min(fit, max_replicas)) if max_replicas else fit


def decide(replicas: list[Replica], limit: int) -> Decision:
    """The choice for one job, from a survey of replica indices 0..limit-1 (a pure function: tested alone).

    - no live replica: start the first (it may wait for its GPUs);
    - a ready replica without a job: join it;
    - a free index below the limit: start a further replica (the caller still needs free GPUs for it, else it
      joins via `least_loaded`);
    - else the least-loaded live replica (ready before starting on a tie, then the lowest index).
    """
    live = [replica for replica in replicas if replica.status in ("ready", "starting")]
    free = [replica.index for replica in replicas[:limit] if replica.status == "free"]
    if not live:
        return Decision("start", free[0]) if free else Decision("retry", -1)
    idle = [replica for replica in live if replica.status == "ready" and replica.load == 0]
    if idle:
        return Decision("join", idle[0].index)
    if free:
        return Decision("start", free[0])
    return least_loaded(live)


def least_loaded(replicas: list[Replica]) -> Decision:
    live = [replica for replica in replicas if replica.status in ("ready", "starting")]
    if not live:
        return Decision("retry", -1)
    best = min(live, key=lambda replica: (replica.load, replica.status != "ready", replica.index))
    return Decision("join" if best.status == "ready" else "wait", best.index)
