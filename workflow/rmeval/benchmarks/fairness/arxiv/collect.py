"""The per-paper filter chain shared by the snapshot and API sources, with counts at every step."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from rmeval.benchmarks.fairness.arxiv.categories import GroupSpec, Membership
from rmeval.benchmarks.fairness.arxiv.records import (
    Paper,
    canonical_id,
    normalize_text,
    sample_key,
    version_number,
)
from rmeval.benchmarks.fairness.arxiv.sampling import EligibleLog, HashSampler

# Order in which the steps are reported; each count is the number of records that left (or reached) it.
STEP_ORDER = [
    "records_read",
    "blank_lines",
    "malformed",
    "no_categories",
    "unknown_category",
    "outside_group",
    "mixed_groups",
    "single_group",
    "outside_dates",
    "empty_title",
    "empty_abstract",
    "eligible_with_duplicates",
]
_SHOWN_EXAMPLES = 5


@dataclass
class Problems:
    """Counts and the first few examples of each kind of bad record, printed to the job's log."""

    examples: dict[str, list[str]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, message: str) -> None:
        self.totals[kind] = self.totals.get(kind, 0) + 1
        shown = self.examples.setdefault(kind, [])
        if len(shown) < _SHOWN_EXAMPLES:
            shown.append(message)
            print(f"warning: {message}", file=sys.stderr)

    def summary(self) -> list[str]:
        lines = []
        for kind, total in self.totals.items():
            hidden = total - len(self.examples.get(kind, []))
            if hidden > 0:
                lines.append(f"{kind}: {total} records in all ({hidden} more not shown)")
        return lines


@dataclass
class DateWindow:
    start: date | None = None
    end: date | None = None

    @property
    def active(self) -> bool:
        return self.start is not None or self.end is not None

    def contains(self, day: date) -> bool:
        return (self.start is None or day >= self.start) and (self.end is None or day <= self.end)


def _where(origin: str | tuple[str, int]) -> str:
    return origin if isinstance(origin, str) else f"{origin[0]} line {origin[1]}"


class GroupCollector:
    """Feeds records through canonicalisation, the single-group rule, the date window and the text checks.

    Eligible papers go to the bounded `HashSampler` and to the on-disk `EligibleLog`.
    """

    def __init__(
        self, spec: GroupSpec, sampler: HashSampler, log: EligibleLog, window: DateWindow | None = None
    ) -> None:
        self.spec = spec
        self.sampler = sampler
        self.log = log
        self.window = window or DateWindow()
        self.counts: dict[str, int] = {step: 0 for step in STEP_ORDER}
        self.problems = Problems()
        self.unknown_categories: dict[str, int] = {}

    def offer(
        self,
        raw_id: object,
        raw_categories: object,
        raw_title: object,
        raw_abstract: object,
        origin: str | tuple[str, int],
        day: date | None = None,
        raw_versions: object = None,
    ) -> None:
        """One record; `day` is its submission date, needed only when a date window is set; `raw_versions`
        is a Kaggle record's `versions` list (with the id's `vN`, it decides which duplicate is the latest).

        `origin` is a string or (file name, line number); it is formatted only when a message needs it.
        This runs once per snapshot line, so the common path (a paper outside the group) is kept short.
        """
        counts = self.counts
        if type(raw_id) is not str or not raw_id.strip():
            counts["malformed"] += 1
            self.problems.add("malformed", f"{_where(origin)}: no string 'id' field; skipped")
            return
        if raw_categories is not None and not isinstance(raw_categories, (str, list, tuple)):
            raw_categories = None
        membership, categories = self.spec.classify(raw_categories)  # type: ignore[arg-type]
        if membership is not Membership.INSIDE:
            counts[membership] += 1
            if membership is Membership.NO_CATEGORIES:
                self.problems.add(
                    "no_categories", f"{_where(origin)}: id {raw_id} has no categories; skipped"
                )
            elif membership is Membership.UNKNOWN_CATEGORY:
                for name in categories:
                    if self.spec.table.canonicalize(name) is None:
                        self.unknown_categories[name] = self.unknown_categories.get(name, 0) + 1
            return
        counts["single_group"] += 1
        if self.window.active and (day is None or not self.window.contains(day)):
            counts["outside_dates"] += 1
            if day is None:
                self.problems.add("no_date", f"{_where(origin)}: id {raw_id} has no submission date; skipped")
            return
        title = normalize_text(raw_title) if isinstance(raw_title, str) else ""
        if not title:
            counts["empty_title"] += 1
            self.problems.add("empty_title", f"{_where(origin)}: id {raw_id} has an empty title; skipped")
            return
        if not isinstance(raw_abstract, str) or not raw_abstract.strip():
            counts["empty_abstract"] += 1
            self.problems.add(
                "empty_abstract", f"{_where(origin)}: id {raw_id} has an empty abstract; skipped"
            )
            return
        counts["eligible_with_duplicates"] += 1
        paper_id = canonical_id(raw_id)
        key = sample_key(paper_id, self.sampler.seed)
        self.log.add(key, title)
        version = version_number(raw_id, raw_versions)
        if self.sampler.admits(paper_id, key, version):  # only papers entering the sample pay for normalisation
            paper = Paper(paper_id, title, normalize_text(raw_abstract), categories, _where(origin),
                          f"v{version}" if version else "")
            self.sampler.add(key, paper, version)

    def ordered_counts(self) -> dict[str, int]:
        ordered = {step: self.counts.get(step, 0) for step in STEP_ORDER}
        ordered.update({k: v for k, v in self.counts.items() if k not in ordered})
        return ordered

    def report_unknown(self, where: str | Path) -> None:
        if self.unknown_categories:
            top = sorted(self.unknown_categories.items(), key=lambda kv: -kv[1])[:10]
            shown = ", ".join(f"{name} ({n})" for name, n in top)
            print(
                f"warning: {where}: categories not in the category table were skipped: {shown}",
                file=sys.stderr,
            )
