"""The config's `scoring:` section as one typed object, and the `rmeval score` flags it stands for.

The schema (workflow/schemas/config.schema.yaml) fills the workflow's defaults; the field defaults here are the
same values for `rmeval score` run by hand (tests/test_settings_defaults.py keeps the two equal).
`command_settings` is what the score rule hands `rmeval score` in its `--settings` (rmeval.cli_settings).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rmeval.errors import RmevalError


@dataclass(frozen=True)
class ScoringSettings:
    compile: bool = False  # torch.compile(dynamic=True) each model
    threads: int = 2  # CPU threads per job: the rule's `threads:`, not a flag
    token_budget: int | None = None  # padded tokens per batch; None = the device's default (rmeval.scoring.job)
    max_batch_rows: int = 64
    checkpoint_every: int = 500  # rows between checkpoints; 0 disables them
    server: bool = True  # locally, score through the run's model server

    @classmethod
    def from_mapping(cls, raw: dict[str, Any]) -> ScoringSettings:
        known = [field.name for field in fields(cls)]
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise RmevalError(f"scoring: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return cls(**raw)

    def command_settings(self) -> dict[str, Any]:
        """The `rmeval score` options these settings stand for, by option name (part of its `--settings`)."""
        settings: dict[str, Any] = {"checkpoint_every": int(self.checkpoint_every),
                                    "max_batch_rows": int(self.max_batch_rows)}
        if self.token_budget:
            settings["token_budget"] = int(self.token_budget)
        if self.compile:
            settings["compile"] = True
        # The server is the default inside a local run, so `true` sets nothing; false loads the model in every job.
        if self.server is False:
            settings["server"] = False
        return settings


SCORING_DEFAULTS = ScoringSettings()
