"""The fairness benchmark's lock section provider (its catalogue's `lock_section`)."""

from __future__ import annotations

from rmeval.benchmarks.fairness.lock.build import build_section
from rmeval.benchmarks.fairness.lock.diff import diff_section
from rmeval.benchmarks.fairness.lock.section import ArxivLock, parse_section
from rmeval.lock.section import LockSection, SummaryRow


def summary_rows(record: ArxivLock) -> list[SummaryRow]:
    rows = []
    for name, group in record.groups.items():
        versioned = sum(1 for paper in group.papers if paper.version)
        if record.corpus is not None:
            rows.append(("group", name, f"{len(group.papers)} rows, table sha256 {group.table_sha256[:16]}"))
            continue
        rows.append(("group", name, f"{len(group.papers)} papers ({versioned} with versions), "
                                    f"table sha256 {group.table_sha256[:16]}"))
    return rows


def phrases(record: ArxivLock) -> tuple[str, str]:
    """A corpus run locks the corpus's rows, and reruns from the same `corpus:` (checked by `rmeval lock diff`)."""
    if record.corpus is not None:
        return "corpus rows", "the same `corpus:`"
    return LOCK_SECTION.locks, LOCK_SECTION.rerun


LOCK_SECTION = LockSection(
    keys=("arxiv", "corpus", "groups"),
    locks="arXiv papers with versions",
    rerun="`arxiv.source: lock`",
    build=build_section,
    parse=parse_section,
    diff=diff_section,
    summary_rows=summary_rows,
    phrases=phrases,
)
