"""Before the first job: does this machine have what the run needs? One line per problem, with the way out.

Checked, for the jobs that will run:
- models (shared by every benchmark): hub models in the Hugging Face cache at their registry revision (null: main; no download),
  else network to the hub endpoint; remote models whose endpoint needs a key: the variable named by
  `options.api_key_env`; local model folders (a `config.json` inside);
- what each benchmark's plan says its data stages need (`Needs`, rmeval.run_plan.BenchmarkPlan.needs): local
  input files, endpoints (a DNS lookup and TCP connect; loopback URLs are skipped), Hugging Face datasets (cached,
  else the hub must be reachable), and format checks of present files.

The Snakefile runs these at parse time in a dry run (reported as warnings: nothing fails) and in its `onstart`
handler in a real run, where only the jobs that are about to run count, and any problem stops the run before
its first job. `RMEVAL_PREFLIGHT=warn` reports without stopping; `RMEVAL_PREFLIGHT=off` skips the checks.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rmeval.registry import ModelSpec

OFFLINE_DOCS = 'README, "Offline and air-gapped runs"'
PROBE_TIMEOUT_S = 3.0
MODES = ("on", "warn", "off")


@dataclass(frozen=True)
class Problem:
    """One missing thing: the config key it comes from, what is wrong, the way out, and the jobs it blocks."""

    key: str
    what: str
    fix: str
    rules: frozenset[str]
    models: frozenset[str] = frozenset()
    network: bool = False  # it needs network this machine lacks: the report offers the offline demo

    def line(self) -> str:
        return f"{self.key}: {self.what}; {self.fix}"


@dataclass(frozen=True)
class Need:
    """Something a benchmark's rules need: the config key it comes from, what is wrong when it is missing (the
    setting that needs it, for an endpoint or a dataset), the way out, the rules it blocks."""

    key: str
    what: str
    fix: str
    rules: frozenset[str]


@dataclass(frozen=True)
class FileNeed(Need):
    """A local input file: Snakemake would stop on its absence anyway, so a missing one always fails."""

    path: str = ""


@dataclass(frozen=True)
class UrlNeed(Need):
    """An endpoint its jobs contact (not probed when it is on loopback)."""

    url: str = ""


@dataclass(frozen=True)
class DatasetNeed(Need):
    """A Hugging Face dataset its data stage loads: in the cache, or the hub must be reachable."""

    dataset: str = ""


@dataclass(frozen=True)
class Check:
    """A format check of a present input (e.g. the first record of a snapshot): a Problem, or None; or a list of
    Problems (one line each: every bad item of a file at once)."""

    rules: frozenset[str]
    run: Callable[[], Problem | list[Problem] | None]


@dataclass(frozen=True)
class Needs:
    """What one benchmark's data stages need from this machine (its planner builds it)."""

    files: tuple[FileNeed, ...] = ()
    urls: tuple[UrlNeed, ...] = ()
    datasets: tuple[DatasetNeed, ...] = ()
    checks: tuple[Check, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What the run asks for, as the workflow resolved it (rmeval.run_plan.RunPlan.preflight_plan)."""

    models: Mapping[str, ModelSpec]
    # Config key naming each model, e.g. "models[0] (Skywork-Reward-V2-Qwen3-0.6B)".
    model_keys: Mapping[str, str] = field(default_factory=dict)
    score_rules: frozenset[str] = frozenset({"download_model"})  # the rules that load or call a model
    needs: tuple[Needs, ...] = ()
    built: frozenset[str] = frozenset()  # models whose local folder the run builds itself (`tiny_models`)


# ----------------------------------------------------------------------------- environment
def mode(env: Mapping[str, str] = os.environ) -> str:
    value = env.get("RMEVAL_PREFLIGHT", "on").strip().lower() or "on"
    aliases = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}
    value = aliases.get(value, value)
    if value not in MODES:
        raise ValueError(f"RMEVAL_PREFLIGHT={env.get('RMEVAL_PREFLIGHT')!r}: expected on, warn or off")
    return value


def endpoint(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "", port


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _proxy_for(url: str) -> str | None:
    """The proxy urllib/requests would use for `url` (HTTPS_PROXY, ... and NO_PROXY), if any."""
    import urllib.request

    scheme = urlsplit(url).scheme
    proxy = urllib.request.getproxies().get(scheme)
    if proxy and not urllib.request.proxy_bypass(urlsplit(url).hostname or ""):
        return proxy
    return None


def tcp_probe(host: str, port: int, timeout: float) -> str | None:
    """None when a TCP connection to host:port opens within `timeout`, else the reason in a few words."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        return f"DNS lookup of {host} failed: {error.strerror or error}"
    last = "no address"
    for family, kind, proto, _, address in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout)
                sock.connect(address)
                return None
        except OSError as error:
            last = f"{type(error).__name__}: {error.strerror or error}"
    return f"cannot connect to {host}:{port} ({last})"


Probe = Callable[[str, int, float], "str | None"]


def reachability(urls: Iterable[str], probe: Probe = tcp_probe, timeout: float = PROBE_TIMEOUT_S) -> dict[str, str | None]:
    """url -> None (reachable) or why not; all probes run at once and the whole check waits at most `timeout`."""
    targets: dict[str, tuple[str, int, str]] = {}
    for url in dict.fromkeys(urls):
        proxy = _proxy_for(url)
        host, port = endpoint(proxy or url)
        targets[url] = (host, port, f" through proxy {host}:{port}" if proxy else "")
    results: dict[tuple[str, int], str | None] = {}
    pending = {(host, port) for host, port, _ in targets.values()}

    def run(host: str, port: int) -> None:
        try:
            results[(host, port)] = probe(host, port, timeout)
        except Exception as error:  # a probe never crashes the workflow's parse
            results[(host, port)] = f"{type(error).__name__}: {error}"

    threads = [threading.Thread(target=run, args=target, daemon=True) for target in pending]
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    answers: dict[str, str | None] = {}
    for url, (host, port, via) in targets.items():
        reason = results.get((host, port), f"no answer from {host}:{port} within {timeout:g} s")
        answers[url] = None if reason is None else reason + via
    return answers


def hub_cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def hub_endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def model_in_cache(repo_id: str, revision: str | None) -> bool:
    """True when the HF cache holds `repo_id` at `revision` (its config.json at least); never downloads."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision or "main")
    except Exception:  # an id the hub would reject is "not cached"; download_model names the real problem
        return False
    return isinstance(found, str)


def dataset_in_cache(repo_id: str) -> bool:
    snapshots = Path(hub_cache_dir()) / f"datasets--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


# ----------------------------------------------------------------------------- checks
Relevant = Callable[[frozenset[str], "str | None"], bool]


def _always(rules: frozenset[str], model: str | None) -> bool:  # noqa: ARG001
    return True


def missing_inputs(plan: Plan, relevant: Relevant = _always) -> list[Problem]:
    """Files the workflow declares as inputs: Snakemake would stop on them anyway, so these always fail."""
    problems = []
    for need in (need for needs in plan.needs for need in needs.files):
        if not Path(need.path).is_file() and relevant(need.rules, None):
            problems.append(Problem(need.key, need.what, need.fix, need.rules))
    return problems


def _names(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 3 else f"{', '.join(names[:3])} and {len(names) - 3} more"


def collect(
    plan: Plan,
    relevant: Relevant = _always,
    env: Mapping[str, str] = os.environ,
    probe: Probe = tcp_probe,
    in_cache: Callable[[str, str | None], bool] = model_in_cache,
    dataset_cached: Callable[[str], bool] = dataset_in_cache,
    timeout: float = PROBE_TIMEOUT_S,
) -> list[Problem]:
    """Every problem that blocks a job `relevant` says will run (missing input files excluded)."""
    from rmeval.hub import hub_offline, looks_local

    problems: list[Problem] = []
    offline = hub_offline(env)
    for check in (check for needs in plan.needs for check in needs.checks):
        if relevant(check.rules, None) and (found := check.run()) is not None:
            problems.extend(found if isinstance(found, list) else [found])
    urls = [need for needs in plan.needs for need in needs.urls
            if relevant(need.rules, None) and not is_loopback(endpoint(need.url)[0])]

    score_rules = plan.score_rules
    uncached: list[str] = []  # hub models that need a download
    for name, spec in plan.models.items():
        key = plan.model_keys.get(name, f"models ({name})")
        if not relevant(score_rules, name):
            continue
        if spec.engine_name == "vllm" and spec.vllm_url is None:
            from rmeval.vllm_engine.environment import ENV_VARIABLE, environment_path, python_of

            if not python_of(environment_path()).is_file():
                problems.append(Problem(
                    f"{key}.engine", f"engine vllm needs the vLLM environment, and there is none at "
                    f"{environment_path()} (${ENV_VARIABLE})", "build it with `rmeval engine install vllm`, or set "
                    "engine: transformers", score_rules, frozenset({name})))
        if spec.adapter_entry.remote:
            variable = str(spec.options.get("api_key_env") or spec.adapter_entry.api_key_env)
            if spec.adapter_entry.api_key_required and not env.get(variable):
                problems.append(Problem(
                    key, f"{variable} (options.api_key_env) is not set; this model scores through an API",
                    f"export {variable}=<your key>, or remove the model (and set reference_model: null if it is "
                    f"the reference)", score_rules, frozenset({name})))
        elif spec.adapter_entry.weightless:
            continue  # a baseline: no weights, no key, nothing this machine could lack
        elif name in plan.built:
            continue  # rule tiny_model writes its folder before the weights stage reads it
        elif looks_local(spec.path):
            folder = Path(spec.path).expanduser()
            if not folder.is_dir() or not (folder / "config.json").is_file():
                what = "does not exist" if not folder.is_dir() else "is not a model folder (no config.json)"
                problems.append(Problem(
                    f"{key}.path", f"local model folder {spec.path} {what}",
                    "point it at a folder written by save_pretrained or `hf download <repo> --local-dir <folder>`",
                    score_rules, frozenset({name})))
        elif not in_cache(spec.path, spec.revision):
            uncached.append(name)

    # Hub datasets not in the cache need the hub.
    datasets = [need for needs in plan.needs for need in needs.datasets
                if relevant(need.rules, None) and not dataset_cached(need.dataset)]

    hub = hub_endpoint() if uncached or datasets else None
    answers = reachability([*(need.url for need in urls), *([hub] if hub else [])], probe=probe, timeout=timeout)
    for need in urls:
        if answers[need.url]:
            problems.append(Problem(
                need.key, f"{need.what} needs {endpoint(need.url)[0]}, which is unreachable ({answers[need.url]})",
                need.fix, need.rules, network=True))
    blocked = ("HF_HUB_OFFLINE is set" if offline else
               f"{endpoint(hub)[0]} is unreachable ({answers[hub]})" if hub and answers[hub] else None)
    if uncached and blocked:
        sections = sorted({plan.model_keys.get(name, "models").split("[")[0] for name in uncached})
        revisions = {plan.models[name].revision or "main" for name in uncached}
        at = f" at revision {revisions.pop()}" if len(revisions) == 1 else " at their registry revisions"
        one = len(uncached) == 1
        problems.append(Problem(
            " / ".join(sections), f"{_names(uncached)} {'is' if one else 'are'} not in the Hugging Face cache "
            f"({hub_cache_dir()}){at}, and {blocked}",
            f"download {'it' if one else 'them'} where there is network into the HF_HOME this run uses, or give "
            f"{'it' if one else 'each'} a local `path` ({OFFLINE_DOCS})", score_rules, frozenset(uncached),
            network=True))
    for need in datasets if blocked else []:
        problems.append(Problem(need.key, f"{need.what} needs {need.dataset}, which is not in the Hugging Face "
                                f"cache, and {blocked}", need.fix, need.rules, network=True))
    return problems


def jobs_filter(jobs: Iterable[Any]) -> Relevant:
    """`relevant` for the jobs of a Snakemake DAG that need to run: (rule name, model wildcard)."""
    planned: set[tuple[str, str | None]] = set()
    for job in jobs:
        wildcards = getattr(job, "wildcards_dict", None) or {}
        planned.add((job.rule.name, wildcards.get("model")))
    rules_planned = {rule for rule, _ in planned}

    def relevant(rules: frozenset[str], model: str | None) -> bool:
        if model is None:
            return bool(rules & rules_planned)
        return any((rule, model) in planned for rule in rules)

    return relevant


def report(problems: list[Problem], tail: str) -> str:
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    lines = "\n".join(f"  {problem.line()}" for problem in problems)
    offline = f"{NO_NETWORK_ROUTES}\n" if any(problem.network for problem in problems) else ""
    return f"preflight: {count} before the first job:\n{lines}\n{offline}{tail}"


NO_NETWORK_ROUTES = (
    "No network here? `snakemake --cores 2 --configfile config/demo.yaml` runs a whole workflow offline now (shipped "
    "data and two random tiny models: its rewards mean nothing); with your own data and model "
    f"folders, config/offline.yaml ({OFFLINE_DOCS}).")


STOP_TAIL = "Nothing was run. Fix these, or set RMEVAL_PREFLIGHT=warn to run anyway (RMEVAL_PREFLIGHT=off skips)."
DRY_RUN_TAIL = "A real run stops here, before its first job (RMEVAL_PREFLIGHT=warn runs anyway)."
WARN_TAIL = "RMEVAL_PREFLIGHT=warn: running anyway."
