"""The test scenarios of `.test/`: each folder holds the `config.yaml` a run uses and an `inputs.yaml` naming what
must be in the run directory first (paths relative to it, as the config reads them): a Kaggle-format snapshot
written from the shared papers, tiny models (`rmeval tiny-model`), files of the shared data, and fixture files kept
in the scenario's folder (`files:`). A model of `kind: vllm` is tests/vllm_helpers.vllm_model (head_dim 64).

The e2e tests prepare a run directory with `prepare`, then run Snakemake there with the scenario's config.
By hand (see .test/README.md):
    python tests/scenarios.py prepare fairness /tmp/rmeval-fairness   # write the inputs, print the snakemake command
    python tests/scenarios.py lint                                    # `snakemake --lint` with every scenario's config
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from workflow_helpers import run_snakemake, shared_data_dir, write_kaggle_snapshot

if TYPE_CHECKING:
    from judge_server import JudgeServer

REPO_ROOT = Path(__file__).resolve().parents[1]
SCENARIOS_DIR = REPO_ROOT / ".test"

# Builds a tiny model folder at the given path: (path, seed, kind) -> None.
TinyModelBuilder = Callable[[Path, int, str], None]


@dataclass(frozen=True)
class Scenario:
    name: str

    @property
    def folder(self) -> Path:
        return SCENARIOS_DIR / self.name

    @property
    def configfile(self) -> Path:
        return self.folder / "config.yaml"

    def config(self) -> dict:
        return yaml.safe_load(self.configfile.read_text())

    def inputs(self) -> dict:
        return yaml.safe_load((self.folder / "inputs.yaml").read_text()) or {}


class TinyModels:
    """Tiny models (`rmeval tiny-model`), each (seed, kind) built once per worker and copied where a scenario
    wants one (building trains a tokenizer; copying a few hundred kB is instant)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, seed: int = 0, kind: str = "classifier") -> Path:
        folder = self.root / f"{kind}-seed{seed}"
        if not (folder / "config.json").exists():
            build_tiny_model_at(folder, seed, kind)
        return folder

    def copy_to(self, path: Path, seed: int, kind: str) -> None:
        shutil.copytree(self.get(seed, kind), path)


# Every probe goes to this proxy, a closed port on loopback, and the Hugging Face cache is empty: "no network",
# the same on every machine, and not one packet leaves the host.
NO_NETWORK_PROXY = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}


@dataclass(frozen=True)
class ScenarioRun:
    """A completed `snakemake --cores 2` run of one .test/ scenario, in its own run directory."""

    scenario: Scenario
    configfile: Path  # the scenario's config.yaml, or the edited copy that ran
    workdir: Path
    wall_seconds: float
    output: str  # the run's stdout and stderr

    @property
    def config(self) -> dict:
        return yaml.safe_load(self.configfile.read_text())

    @property
    def results(self) -> Path:
        return self.workdir / "results"

    @property
    def models(self) -> tuple[str, ...]:
        """The names of the config's `models` (inline entries and registry names)."""
        return tuple(model if isinstance(model, str) else model["name"] for model in self.config["models"])

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(self.config["groups"])


# The API key the judges of the `both-branches` scenario read (their `api_key_env`): it must never be written down.
JUDGE_KEY_ENV = "RMEVAL_E2E_JUDGE_KEY"
JUDGE_SECRET = "sk-judge-E2E-91b7d0c4a2-DO-NOT-LEAK"


@dataclass(frozen=True)
class JudgedRun:
    """The `both-branches` run, its judges answered by `server` (still serving, for a rerun from the cache)."""

    run: ScenarioRun
    server: JudgeServer
    requests: int  # what the run sent the server


def judge_entries(config: dict) -> list[dict]:
    """The LLM judges of a config, in both branches."""
    return [entry for entry in [*config["models"], *config["rewardmath"]["models"]]
            if isinstance(entry, dict) and entry["adapter"] == "judge"]


def run_scenario(name: str, workdir: Path, shared_data: Path | None, tiny_models: TinyModels, *args: str,
                 env: dict[str, str] | None = None, edit: Callable[[dict], None] | None = None) -> ScenarioRun:
    """Prepare the scenario's inputs in `workdir`, then `snakemake --cores 2` there with its config; `edit` (a
    test's small override) changes a copy of the config, written to `workdir/config.yaml`, that runs instead."""
    scenario = Scenario(name)
    prepare(scenario, workdir, shared_data, tiny_models.copy_to)
    configfile = scenario.configfile
    if edit is not None:
        config = scenario.config()
        edit(config)
        configfile = workdir / "config.yaml"
        configfile.write_text(yaml.safe_dump(config, sort_keys=False))
    started = time.perf_counter()
    result = run_snakemake(workdir, configfile, "--cores", "2", *args, env=env)
    return ScenarioRun(scenario, configfile, workdir, time.perf_counter() - started, result.stdout + result.stderr)


def scenario_names() -> list[str]:
    return sorted(path.parent.name for path in SCENARIOS_DIR.glob("*/config.yaml"))


# A kind of tiny model built by the tests rather than `rmeval tiny-model`: the Llama-3-layout classifier with head_dim
# 64 that vLLM's CPU attention takes (tests/vllm_helpers.vllm_model).
VLLM_KIND = "vllm"


def build_tiny_model_at(path: Path, seed: int, kind: str) -> None:
    if kind == VLLM_KIND:
        from vllm_helpers import vllm_model

        vllm_model(path, seed=seed)
        return
    from rmeval.testing.tiny_model import build_tiny_model

    build_tiny_model(path, seed=seed, kind=kind)


def _with_second_versions(snapshot: Path, every: int) -> None:
    """Give every `every`-th record a v2 (a real Kaggle record lists all its versions, the latest last)."""
    with gzip.open(snapshot, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    for index, record in enumerate(records):
        if index % every == 0:
            record["versions"].append({"version": "v2", "created": "Tue, 3 Apr 2007 10:00:00 GMT"})
    with gzip.open(snapshot, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)


def _shared_file(shared_data: Path, target: Path, source: str | dict) -> None:
    """A link to a file or folder of the shared data, or (`{from, lines}`) a copy of its first lines."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, dict):
        lines = (shared_data / source["from"]).read_text().splitlines()[: source["lines"]]
        target.write_text("\n".join(lines) + "\n")
    else:
        target.symlink_to(shared_data / source)


def prepare(scenario: Scenario, workdir: Path, shared_data: Path | None,
            tiny_model: TinyModelBuilder = build_tiny_model_at) -> None:
    """Put the scenario's inputs (its inputs.yaml) into `workdir`; `shared_data` only where they name it."""
    inputs = scenario.inputs()
    if shared_data is None and (inputs.get("snapshot") or inputs.get("shared")):
        raise FileNotFoundError(f"scenario {scenario.name} needs the shared data (../shared/data or "
                                f"$RMEVAL_SHARED_DATA)")
    workdir.mkdir(parents=True, exist_ok=True)
    if snapshot := inputs.get("snapshot"):
        path = workdir / snapshot["path"]
        write_kaggle_snapshot(shared_data, path, per_group=snapshot["per_group"])
        if every := snapshot.get("second_version_every"):
            _with_second_versions(path, every)
    for path, model in (inputs.get("models") or {}).items():
        tiny_model(workdir / path, model.get("seed", 0), model.get("kind", "classifier"))
    for path, source in (inputs.get("shared") or {}).items():
        _shared_file(shared_data, workdir / path, source)
    for path, source in (inputs.get("repository") or {}).items():  # a file of this repository (e.g. a corpus)
        target = workdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO_ROOT / source, target)
    for path, source in (inputs.get("files") or {}).items():  # fixtures kept in the scenario's folder
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(scenario.folder / source, workdir / path)


def lint(names: list[str], shared_data: Path, root: Path) -> int:
    """`snakemake --lint` with each scenario's config, in a run directory holding its inputs; the failures."""
    tiny_models = TinyModels(root / "tiny-models")
    failed = 0
    for name in names:
        scenario = Scenario(name)
        workdir = root / name
        prepare(scenario, workdir, shared_data, tiny_models.copy_to)
        result = run_snakemake(workdir, scenario.configfile, "--lint", check=False)
        clean = result.returncode == 0
        print(f"{name}: {'lint clean' if clean else 'LINT FAILED'}", flush=True)
        if not clean:
            failed += 1
            print(result.stdout[-4000:] + result.stderr[-4000:], file=sys.stderr)
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The scenarios of .test/: prepare one's inputs, or lint them all.")
    commands = parser.add_subparsers(dest="command", required=True)
    prepare_parser = commands.add_parser("prepare", help="write a scenario's inputs into a run directory")
    prepare_parser.add_argument("scenario", choices=scenario_names())
    prepare_parser.add_argument("workdir", type=Path)
    lint_parser = commands.add_parser("lint", help="`snakemake --lint` with every scenario's config")
    lint_parser.add_argument("scenarios", nargs="*", help=f"default: all ({', '.join(scenario_names())})")
    args = parser.parse_args(argv)
    unknown = sorted(set(getattr(args, "scenarios", [])) - set(scenario_names()))
    if unknown:
        parser.error(f"no such scenario in .test/: {', '.join(unknown)}")
    shared_data = shared_data_dir()
    if args.command == "lint":
        if shared_data is None:
            parser.error("shared data not found: set RMEVAL_SHARED_DATA or place it at ../shared/data")
        with tempfile.TemporaryDirectory(prefix="rmeval-scenarios-") as root:
            return 1 if lint(args.scenarios or scenario_names(), shared_data, Path(root)) else 0
    scenario, workdir = Scenario(args.scenario), args.workdir.resolve()
    try:
        prepare(scenario, workdir, shared_data)
    except FileNotFoundError as error:
        parser.error(str(error))
    print(shlex.join(["snakemake", "--cores", "2", "--directory", str(workdir), "--configfile",
                      str(scenario.configfile.relative_to(REPO_ROOT))]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
