"""The two RewardBench versions as data: what their rows hold and where their files go. Import-free."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Version:
    """One RewardBench version.

    name: its benchmark and config section (`rewardbench`, `rewardbench2`), also the score table's name
    (results/scores/<name>/{model}/<name>.parquet). columns: the HF dataset's columns every row must have.
    """

    name: str
    title: str
    columns: tuple[str, ...]
    chance: float  # percent: a random reward model's expected score (v1: a coin flip; v2: best of four)
    # the official script's truncation side: run_rm.py sets `tokenizer.truncation_side = "left"`; run_v2.py
    # keeps the tokenizer's own (None)
    truncation_side: str | None

    @property
    def data(self) -> str:
        return f"results/{self.name}/data/{self.name}.parquet"

    @property
    def manifest(self) -> str:
        return f"results/{self.name}/data/manifest.json"

    @property
    def prepare_rule(self) -> str:
        return f"{self.name}_prepare"

    @property
    def metrics_rule(self) -> str:
        return f"{self.name}_metrics"

    @property
    def score_rule(self) -> str:
        return f"{self.name}_score"

    @property
    def export_rule(self) -> str:
        return f"{self.name}_export"

    @property
    def scores_dir(self) -> str:
        """Its score files' folder ({model}/<name>.parquet below it): the catalogue's namespaced one."""
        from rmeval.benchmarks.catalogue import scores_dir

        return scores_dir(self.name)

    @property
    def score_file(self) -> str:
        """One model's score file, with the {model} wildcard (its one table is named like the version)."""
        return f"{self.scores_dir}/{{model}}/{self.name}.parquet"


# The columns scoring and the metrics read (rmeval.benchmarks.rewardbench.loading.prepare): a local file needs only
# these; the datasets' other columns (v1 chosen_model / rejected_model, v2 models) may be there or not.
V1 = Version("rewardbench", "RewardBench", ("id", "prompt", "chosen", "rejected", "subset"), chance=50.0,
             truncation_side="left")
V2 = Version("rewardbench2", "RewardBench 2", ("id", "prompt", "chosen", "rejected", "num_correct", "num_rejected",
                                               "total_completions", "subset"), chance=25.0, truncation_side=None)
VERSIONS = {version.name: version for version in (V1, V2)}
