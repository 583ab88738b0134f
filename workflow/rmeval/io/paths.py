"""Where a path written in a config points (the config's paths are the user's: the run directory's first)."""

from __future__ import annotations

from pathlib import Path


def config_path(value: str, repo: Path, workdir: Path | None = None) -> str:
    """A user path from the config: relative to the working directory if it exists there, else to the repo."""
    path = Path(value)
    if path.is_absolute() or (path if workdir is None else workdir / path).exists():
        return str(path)
    return str(repo / value)
