"""What the run-level rules (workflow/rules/run.smk) pass, planned once from the config at Snakefile parse time.

Their inputs are the files each enabled benchmark's providers read (its catalogue's `reproduction_inputs` /
`summary_inputs`, its `published` files) and the run-level files the summary cites; their settings are one
`--settings` JSON each (rmeval.cli_settings): the enabled benchmarks, the run's alpha (stats.alpha) and each
benchmark's `run_settings` read from the config. Light on purpose (no pandas): the Snakefile imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmeval.benchmarks import all_benchmarks
from rmeval.benchmarks.catalogue import Benchmark
from rmeval.cli_settings import settings_json
from rmeval.run_outputs.catalogue import RUN, SUMMARY_RULE
from rmeval.run_outputs.report import report_sections
from rmeval.run_plan import config_value

ALPHA_KEY = "stats.alpha"  # the run's significance level: every verdict and summary sentence uses it


@dataclass(frozen=True)
class RunOutputsPlan:
    benchmarks: tuple[Benchmark, ...]  # the enabled ones, in catalogue order
    alpha: float
    options: Mapping[str, Mapping[str, Any]]  # benchmark -> its run_settings' values
    repository: Path  # the published-values files are relative to it
    report_sections: tuple[str, ...]  # for the report's front page (rmeval.run_outputs.report)
    report_skipped: Mapping[str, str]  # the files the run does not write, stem -> why: the front page's last part
    random_models: tuple[str, ...] = ()  # models with random weights (`tiny_models`): the summary says so first
    baselines: Mapping[str, str] = field(default_factory=dict)  # trivial baselines -> kind: "Which model is better"
    # files in results/ this run did not write (rmeval.run_outputs.strays): named in the summary and the report
    strays: tuple[Mapping[str, str], ...] = ()

    @property
    def report_tail(self) -> str:
        """The report front page's last section: the files in results/ not from this run ("" when none)."""
        from rmeval.run_outputs.strays import rst_section

        return rst_section(self.strays) if self.strays else ""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], repository: Path, random_models: tuple[str, ...] = (),
                    skipped: Mapping[str, str] | None = None,
                    baselines: Mapping[str, str] | None = None,
                    strays: Sequence[Mapping[str, str]] = ()) -> RunOutputsPlan:
        """`skipped`: the files the run does not write (a figure with nothing to show), stem -> why, for the
        report's front page (rmeval.run_plan.RunPlan.skipped_outputs); `baselines`: the trivial baselines among the
        models and their kind (rmeval.run_outputs.compare.plan.baseline_models); `strays`: the files in results/
        this run did not write (rmeval.run_outputs.strays.not_from_this_run, as JSON)."""
        benchmarks = tuple(bench for bench in all_benchmarks() if bench.enabled(config))
        options = {bench.name: {option: config_value(config, key) for option, key in bench.run_settings.items()}
                   for bench in benchmarks if bench.run_settings}
        from rmeval.run_outputs.summary import random_models_notice

        sections = report_sections(config, repository / "workflow" / "report", skipped or {})
        if random_models:  # the report's first words, as the summary's
            sections.insert(0, random_models_notice(random_models, code=""))  # rst nests no markup in bold
        return cls(benchmarks, float(config_value(config, ALPHA_KEY)), options, repository, tuple(sections),
                   dict(skipped or {}), tuple(random_models), dict(baselines or {}), tuple(strays))

    def _with(self, provider: str) -> list[Benchmark]:
        return [bench for bench in self.benchmarks if getattr(bench, provider) is not None]

    def _published(self, bench: Benchmark) -> list[str]:
        return [str(self.repository / path) for path in bench.published]

    @property
    def reproduction_inputs(self) -> dict[str, str | list[str]]:
        """Rule run_reproduction's `input:`: each provider's tables (`<benchmark>_<key>`) and published files."""
        inputs: dict[str, str | list[str]] = {}
        for bench in self._with("reproduction"):
            inputs.update({f"{bench.name}_{key}": bench.get(key).path for key in bench.reproduction_inputs})
            if bench.published:
                inputs[f"{bench.name}_published"] = self._published(bench)
        return inputs

    @property
    def summary_inputs(self) -> dict[str, str]:
        """Rule run_summary's `input:`: each provider's tables and the run-level files the summary cites."""
        inputs = {f"{bench.name}_{key}": bench.get(key).path
                  for bench in self._with("summary_section") for key in bench.summary_inputs}
        # what a benchmark's claims in "Which model is better" read (its catalogue's compare.claims_inputs)
        inputs.update({f"{bench.name}_{key}": bench.get(key).path
                       for bench in self._with("compare") for key in bench.compare.claims_inputs})
        for key in RUN.of_rule(SUMMARY_RULE)[0].inputs:
            inputs[key] = RUN.get(key).path
        return inputs

    def _settings(self, provider: str, **extra: Any) -> str:
        names = [bench.name for bench in self._with(provider)]
        return settings_json({"benchmarks": names, "alpha": self.alpha,
                              "options": {name: dict(self.options[name]) for name in names if name in self.options},
                              **extra})

    @property
    def reproduction_settings(self) -> str:
        """`rmeval run-reproduction --settings`: the published files too, exactly the rule's inputs."""
        published = [f"{bench.name}={path}" for bench in self._with("reproduction") for path in self._published(bench)]
        return self._settings("reproduction", published=published)

    @property
    def summary_settings(self) -> str:
        random = {"random_models": list(self.random_models)} if self.random_models else {}
        baselines = {"baseline_models": [f"{model}={kind}" for model, kind in self.baselines.items()]} \
            if self.baselines else {}
        strays = {"not_from_this_run": [dict(stray) for stray in self.strays]} if self.strays else {}
        return self._settings("summary_section", **random, **baselines, **strays)
