"""Progress checkpoints beside the output: `<output>.partial/` holds `state.json` and one parquet
part per checkpoint (row index, reward, n_tokens, truncated[, step_rewards]).

A part is written atomically, so a SIGKILL at any moment leaves only whole parts. A rerun resumes
only when the fingerprint (input bytes, task, model spec, dtype, device kind, padding) matches;
anything else starts over, because mixing rewards from two setups would be silent corruption.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from rmeval.io.atomic import write_json_atomic, write_parquet_atomic

if TYPE_CHECKING:
    import pandas as pd


class Checkpoint:
    def __init__(self, output: str | Path, fingerprint: str) -> None:
        output = Path(output)
        self.directory = output.with_name(output.name + ".partial")
        self.fingerprint = fingerprint
        self.parts_written = 0

    def _state_path(self) -> Path:
        return self.directory / "state.json"

    def load(self) -> pd.DataFrame | None:
        """Rows finished by an earlier run of the same job, or None (and a clean slate)."""
        import pandas as pd

        if not self.directory.is_dir():
            return None
        try:
            state = json.loads(self._state_path().read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("fingerprint") != self.fingerprint:
            self.clear()
            return None
        parts = sorted(self.directory.glob("part-*.parquet"))
        self.parts_written = len(parts)
        if not parts:
            return None
        return pd.concat([pd.read_parquet(part) for part in parts], ignore_index=True)

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self._state_path().exists():
            write_json_atomic({"fingerprint": self.fingerprint}, self._state_path())

    def append(self, frame: pd.DataFrame) -> Path:
        self.start()
        path = self.directory / f"part-{self.parts_written:05d}.parquet"
        write_parquet_atomic(frame, path)
        self.parts_written += 1
        return path

    def clear(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
        self.parts_written = 0
