"""What a benchmark's run preset is given (rmeval.benchmarks.catalogue.RunPreset.sections)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunRequest:
    """The run `rmeval run` builds, as far as a benchmark's config sections depend on it.

    models: the run's model names, in the order given (`--model`s first, then `--baseline`s).
    data: the `--data` value for this benchmark (its preset's first form when none was given).
    repository: the repository (its shipped configs and data are read from there).
    """

    models: tuple[str, ...]
    data: str
    repository: Path

    @property
    def data_kind(self) -> str:
        """`snapshot` of `snapshot:FILE`."""
        return self.data.partition(":")[0]

    @property
    def data_file(self) -> str:
        """`FILE` of `snapshot:FILE` ("" when the form takes none)."""
        return self.data.partition(":")[2]
