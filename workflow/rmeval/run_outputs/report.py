"""The report's front page (workflow/report/workflow.rst) gets each enabled benchmark's section from here.

Snakemake renders that page with Jinja and gives it only `snakemake.config`, so workflow/rules/run.smk puts the
sections into the config at parse time, under `SECTIONS_KEY` (no user config has it: the schema allows no such
key, and the config's hash for the lock is taken before), and the page loops over them. A section is an .rst
fragment under workflow/report/ (`Benchmark.report_section`), rendered with the same Jinja settings and
`snakemake.config` as the page. Light: runs at parse time.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rmeval.benchmarks import all_benchmarks
from rmeval.errors import RmevalError

SECTIONS_KEY = "_report_sections"
# The outputs this run leaves out (an optional figure with nothing to show), stem -> why: the front page says so.
SKIPPED_KEY = "_report_skipped"


def report_sections(config: Mapping[str, Any], report_dir: Path) -> list[str]:
    """The front-page sections of the enabled benchmarks, in catalogue order (rendered, without outer blank
    lines)."""
    from jinja2 import Environment

    environment = Environment(trim_blocks=True, lstrip_blocks=True)  # as Snakemake renders the report
    sections = []
    for bench in all_benchmarks():
        if not bench.report_section or not bench.enabled(config):
            continue
        path = report_dir / bench.report_section
        try:
            template = path.read_text(encoding="utf-8")
        except OSError as error:
            raise RmevalError(f"benchmark {bench.name!r}: report_section {path} cannot be read ({error})") from error
        text = environment.from_string(template).render(snakemake=SimpleNamespace(config=config))
        sections.append(text.strip("\n"))
    return sections
