"""The fairness benchmark's part of `rmeval run`'s config (its catalogue's `run_preset`): the groups and the arXiv
source of a shipped config chosen by `--data`, and the reference model of Table 4.

The shipped configs are the one home of each source's settings: `demo` is config/demo.yaml's (the sample in
resources/demo/, offline), `api` config/quickstart.yaml's (export.arxiv.org), `snapshot:FILE` config/offline.yaml's
with FILE as the snapshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.io.yaml_io import load_yaml
from rmeval.run_command.request import RunRequest

SHIPPED = {"demo": "config/demo.yaml", "api": "config/quickstart.yaml", "snapshot": "config/offline.yaml"}


def sections(request: RunRequest) -> dict[str, Any]:
    """`fairness`, `groups`, `arxiv` and `reference_model` for the run: Table 4 correlates every other model's group
    means with the first model's (`--set reference_model=NAME` or `null` changes it)."""
    shipped = load_yaml((request.repository / SHIPPED[request.data_kind]).read_text(encoding="utf-8"))
    arxiv = dict(shipped["arxiv"])
    if request.data_kind == "snapshot":
        snapshot = Path(request.data_file).expanduser()
        if not snapshot.is_file():
            raise RmevalError(f"--data {request.data}: no such file {request.data_file}")
        arxiv["snapshot"] = str(snapshot.resolve())
    return {
        "fairness": {"enabled": True},
        "groups": shipped["groups"],
        "arxiv": arxiv,
        "reference_model": request.models[0] if request.models else None,
    }
