"""The config's `scoring:` section as one typed object, and the `rmeval score` flags it stands for.

The schema (workflow/schemas/config.schema.yaml) holds every default, once: it fills the workflow's config, and the
field defaults here read it (for `rmeval score` run by hand and for Python callers).
`command_settings` is what the score rule hands `rmeval score` in its `--settings` (rmeval.cli_settings).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from rmeval.config_check import schema_default
from rmeval.errors import RmevalError


@dataclass(frozen=True)
class ScoringSettings:
    compile: bool = schema_default("scoring.compile")  # torch.compile(dynamic=True) each model
    threads: int = schema_default("scoring.threads")  # CPU threads per job: the rule's `threads:`, not a flag
    # padded tokens per batch; None = the device's default (rmeval.scoring.job)
    token_budget: int | None = schema_default("scoring.token_budget")
    max_batch_rows: int = schema_default("scoring.max_batch_rows")
    checkpoint_every: int = schema_default("scoring.checkpoint_every")  # rows between checkpoints; 0 disables them
    server: bool = schema_default("scoring.server")  # locally, score through the run's model server
    # warm replicas of a model's server on the free GPUs (None: as many as the GPUs hold; rmeval.scoring.replicas)
    max_replicas: int | None = schema_default("scoring.max_replicas")
    # under the Slurm executor: one allocation per model and run ("model") or per (model, table) job ("job");
    # not an `rmeval score` option (rmeval.scoring.slurm_group), so switching it re-runs nothing
    slurm_grouping: str = schema_default("scoring.slurm_grouping")

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
        if self.max_replicas is not None:
            settings["max_replicas"] = int(self.max_replicas)
        return settings


SCORING_DEFAULTS = ScoringSettings()
