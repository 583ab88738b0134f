"""`rmeval download-model`: fetch a model snapshot at its pinned revision into the shared HF cache.

    rmeval download-model --spec '<ModelSpec JSON>' --out results/models/M.downloaded.json [--hf-home DIR]

On a cluster this runs on the login node (a Snakemake `localrule`), which has internet; the scoring
jobs on compute nodes then load the same snapshot offline (`HF_HUB_OFFLINE=1`) from the shared
`HF_HOME`. The marker it writes records the commit actually fetched.

- Revision: the registry's `revision` (a commit, tag or branch; null = `main`). A branch or tag is
  also recorded under `refs/` in the cache, so an offline load of the same name finds the snapshot.
- Files: when the repository has safetensors weights, duplicate formats (`*.bin`, `*.pth`, `*.h5`,
  `*.msgpack`, `*.onnx`, `*.gguf`, `original/`) are skipped; that halves a typical 7B download.
- Token: gated models need `HF_TOKEN` in the environment (or a prior `hf auth login`); no token is
  ever read from the config or the command line, so none ends up in logs or markers.
- Local directories and remote models (catalogue entries with `remote`: `nemotron-api`, `judge`) need
  nothing: the marker says so.
- `HF_ENDPOINT` (a mirror) is honoured, as everywhere in huggingface_hub.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.errors import RmevalError
from rmeval.hub import hub_offline, looks_local
from rmeval.io.clock import utc_now
from rmeval.models.catalogue import is_published
from rmeval.registry import ModelSpec
from rmeval.scoring.spec_argument import read_spec

# Formats transformers never needs once safetensors weights are present.
DUPLICATE_WEIGHT_PATTERNS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.h5", "*.msgpack", "*.ot", "*.tflite")
# Never needed by transformers' from_pretrained, whatever the weights' format.
UNUSED_PATTERNS = ("*.onnx", "*.onnx_data", "*.gguf", "original/*", "onnx/*", "openvino/*", "coreml/*")


def _log(message: str) -> None:
    print(f"rmeval download-model: {message}", file=sys.stderr, flush=True)


def ignore_patterns(filenames: list[str]) -> list[str]:
    """Patterns of repository files not to fetch, given the repository's file list."""
    patterns = list(UNUSED_PATTERNS)
    if any(name.endswith(".safetensors") for name in filenames):
        patterns += DUPLICATE_WEIGHT_PATTERNS
    return patterns


def _kept(filenames: list[str], patterns: list[str]) -> list[str]:
    return [name for name in filenames if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns)]


def download(spec: ModelSpec) -> dict[str, Any]:
    """Fetch `spec` into the HF cache (HF_HOME) and describe what was fetched."""
    base: dict[str, Any] = {"model": spec.name, "path": spec.path, "requested_revision": spec.revision}
    if spec.adapter_entry.remote:
        _log(f"{spec.name}: adapter {spec.adapter!r} scores through an API; nothing to download")
        return {**base, "source": "api"}
    if is_published(spec):  # its results file, at its pin (the jobs read it offline)
        from rmeval.io.hashing import sha256_file
        from rmeval.published.entry import PublishedEntry

        entry = PublishedEntry.from_spec(spec)
        file = entry.fetch()
        _log(f"{spec.name}: published results {entry.origin} -> {file}")
        return {**base, "source": f"published:{entry.source}", "file": str(file),
                "sha256": sha256_file(file) if file.is_file() else None}
    if spec.adapter_entry.weightless:
        _log(f"{spec.name}: adapter {spec.adapter!r} is a rule on the text, without weights; nothing to download")
        return {**base, "source": "none"}
    if looks_local(spec.path):
        local = Path(spec.path).expanduser()
        if not (local / "config.json").is_file():
            raise RmevalError(f"model {spec.name!r}: path {spec.path!r} is not a model folder (no config.json)")
        _log(f"{spec.name}: local folder {local}; nothing to download")
        return {**base, "source": "local-dir", "snapshot_dir": str(local.resolve())}
    if hub_offline():
        raise RmevalError(
            f"model {spec.name!r}: HF_HUB_OFFLINE is set, so {spec.path!r} cannot be downloaded; "
            f"unset it on the machine that downloads (the login node)"
        )

    if not sys.stderr.isatty():
        # Per-file progress bars only clutter a rule's log file; read before huggingface_hub's import.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from huggingface_hub import HfApi, constants, snapshot_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    revision = spec.revision or "main"
    where = f"model {spec.name!r} ({spec.path}@{revision}, endpoint {constants.ENDPOINT})"
    started = time.monotonic()
    try:
        info = HfApi().model_info(spec.path, revision=revision)
        filenames = [sibling.rfilename for sibling in info.siblings or []]
        skipped = ignore_patterns(filenames)
        _log(f"{spec.name}: {spec.path}@{revision} = commit {info.sha}; fetching {len(_kept(filenames, skipped))} "
             f"of {len(filenames)} files into {constants.HF_HUB_CACHE}")
        # Download by the requested name (not the commit) so refs/<name> is written for offline loads.
        snapshot = Path(snapshot_download(spec.path, revision=revision, ignore_patterns=skipped))
    except GatedRepoError:
        raise RmevalError(
            f"{where} is gated: accept its licence on the model page, then export HF_TOKEN=<a read token> "
            f"in the shell that runs the workflow"
        ) from None
    except RevisionNotFoundError:
        raise RmevalError(f"{where}: revision {revision!r} not found; fix `revision` in the registry") from None
    except RepositoryNotFoundError:
        raise RmevalError(
            f"{where}: repository not found (or private: export HF_TOKEN); fix `path` in the registry"
        ) from None
    except Exception as error:  # connection refused, DNS, timeouts, hub errors: name them, keep the chain
        raise RmevalError(f"{where}: download failed ({type(error).__name__}: {error})") from error

    files = sorted(str(item.relative_to(snapshot)) for item in snapshot.rglob("*") if item.is_file())
    size = sum((snapshot / name).stat().st_size for name in files)
    wall_s = time.monotonic() - started
    _log(f"{spec.name}: {len(files)} files, {size / 1e6:.1f} MB in {wall_s:.1f} s -> {snapshot}")
    if info.sha and snapshot.name != info.sha:
        _log(f"{spec.name}: note: {revision!r} moved during the download; fetched commit {snapshot.name}")
    return {
        **base,
        "source": "hub",
        "endpoint": constants.ENDPOINT,
        "commit": snapshot.name,
        "snapshot_dir": str(snapshot),
        "hf_hub_cache": str(constants.HF_HUB_CACHE),
        "files": files,
        "bytes": size,
        "skipped_patterns": skipped,
        "wall_s": round(wall_s, 3),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rmeval download-model",
        description="Fetch a model snapshot at its pinned revision into HF_HOME (run where there is internet).",
    )
    parser.add_argument("--spec", required=True, help="the model's registry entry as JSON (or @file.json)")
    parser.add_argument("--out", required=True, type=Path, help="marker JSON to write once the snapshot is complete")
    parser.add_argument("--hf-home", type=Path,
                        help="Hugging Face home to fill (default: $HF_HOME, else ~/.cache/huggingface); "
                             "on a cluster, a folder every compute node sees")
    cli_settings.add_settings_argument(parser)
    return parser


def main(argv: list[str]) -> int:
    args = cli_settings.parse_args(build_parser(), argv)
    spec = read_spec(args.spec)
    if args.hf_home is not None:
        # huggingface_hub reads HF_HOME once, at import: set it first.
        os.environ["HF_HOME"] = str(args.hf_home.expanduser().resolve())
    marker = download(spec)
    marker["hf_home"] = os.environ.get("HF_HOME")
    marker["downloaded_at"] = utc_now()
    from rmeval.io.atomic import write_json_atomic

    write_json_atomic(marker, args.out)
    return 0
