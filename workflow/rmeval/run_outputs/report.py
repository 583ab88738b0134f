"""The report's front page: workflow/report/workflow.rst with each enabled benchmark's section in its place.

Snakemake renders the page named by `report:` with Jinja and gives it only `snakemake.config`; rather than write
the sections into the config (whose hash the lock records), workflow/rules/run.smk composes the page at parse time
into `FRONT_PAGE` under the run's .snakemake folder (rewritten only when it changes) and names that file with
`report:`. A section is an .rst fragment under workflow/report/ (`Benchmark.report_section`), rendered with the
same Jinja settings and `snakemake.config` as the page. Light: runs at parse time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rmeval.benchmarks import all_benchmarks
from rmeval.errors import RmevalError

PAGE = "workflow.rst"
SECTIONS_MARK = "{# SECTIONS #}"  # the line of PAGE the sections replace
# The line of PAGE that the files left out of this run replace: after everything the report holds (the run-level
# items too), so that the heading "Not in this report" covers only what is not in it.
SKIPPED_MARK = "{# NOT IN THIS REPORT #}"
FRONT_PAGE = ".snakemake/rmeval/report/workflow.rst"


def front_page(sections: Sequence[str], report_dir: Path, skipped: Mapping[str, str] | None = None,
               tail: str = "") -> str:
    """PAGE with the sections (rendered) where its SECTIONS_MARK line is, one blank line apart, and the files this
    run left out (`skipped_section`) where its SKIPPED_MARK line is, at the end, then `tail` (the files in results/
    not from this run: rmeval.run_outputs.strays.rst_section)."""
    page = (report_dir / PAGE).read_text(encoding="utf-8")
    for mark, what in ((SECTIONS_MARK, "the benchmarks' sections"), (SKIPPED_MARK, "the files left out")):
        if mark not in page:
            raise RmevalError(f"{report_dir / PAGE}: no {mark} line for {what}")
    page = page.replace(SECTIONS_MARK, "\n\n".join(sections))
    last = "\n\n".join(part for part in (skipped_section(skipped) if skipped else "", tail) if part)
    return page.replace(SKIPPED_MARK, last).rstrip("\n") + "\n"


def write_front_page(sections: Sequence[str], report_dir: Path, path: Path,
                     skipped: Mapping[str, str] | None = None, tail: str = "") -> Path:
    """The composed page at `path` (absolute, for `report:`), written only when its text changes."""
    from rmeval.io.atomic import write_text_atomic

    text = front_page(sections, report_dir, skipped, tail)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(text, path)
    return path.resolve()


def skipped_section(skipped: Mapping[str, str]) -> str:
    """The files this run does not write (a figure with nothing to show), each with the reason."""
    lines = ["Not in this report", "------------------", ""]
    return "\n".join([*lines, *(f"* ``{stem}``: {why}." for stem, why in skipped.items())])


def report_sections(config: Mapping[str, Any], report_dir: Path, skipped: Mapping[str, str] | None = None) -> list[str]:
    """The front-page sections of the enabled benchmarks, in catalogue order (rendered, without outer blank
    lines; a template sees `skipped`, stem -> why, to name no file the run did not write). The files left out and
    why are `front_page`'s, at the page's end."""
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
        text = environment.from_string(template).render(snakemake=SimpleNamespace(config=config),
                                                        skipped=dict(skipped or {}))
        sections.append(text.strip("\n"))
    return sections
