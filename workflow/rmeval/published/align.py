"""Alignment of a published file's items with this run's items, by the benchmark's own id (issue 49).

An item is matched when both sides hold it with the same rows (a RewardBench 2 prompt with the same number of
completions); what is missing on either side, or held with other rows, is counted and named. Comparisons run on the
matched items. Fewer than `MIN_MATCHED` of this run's items matched is an error naming the data each side used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rmeval.errors import RmevalError

MIN_MATCHED = 0.9  # the share of this run's items a published file must hold
NAMED = 5  # ids named in a line; the rest counted


@dataclass(frozen=True)
class Alignment:
    run_items: int
    matched: tuple[str, ...]
    missing: tuple[str, ...]  # this run's items the file lacks
    extra: tuple[str, ...]  # the file's items this run lacks
    different: tuple[str, ...]  # on both sides, but with other rows (another data revision)

    @property
    def fraction(self) -> float:
        return len(self.matched) / self.run_items if self.run_items else 0.0

    def words(self) -> str:
        """`matched 2983 of 2985 items (99.9 %); the file lacks 2 (id 12, 13); ...`."""
        parts = [f"matched {len(self.matched)} of {self.run_items} items ({100 * self.fraction:.1f} %)"]
        for count, what in ((self.missing, "the file lacks"), (self.extra, "this run lacks the file's"),
                            (self.different, "other rows on the two sides for")):
            if count:
                parts.append(f"{what} {len(count)} ({named(count)})")
        return "; ".join(parts)

    def record(self) -> dict[str, object]:
        """For the score sidecar: counts and the first ids of each kind."""
        return {"run_items": self.run_items, "matched": len(self.matched),
                **{key: {"count": len(ids), "first": list(ids[:NAMED])}
                   for key, ids in (("missing", self.missing), ("extra", self.extra),
                                    ("different", self.different))}}


def named(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:NAMED])
    return f"id {shown}" + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def group_rows(row_ids: Iterable[str], item_of: Callable[[str], str]) -> dict[str, tuple[str, ...]]:
    """item id -> its row ids, in first-seen order."""
    items: dict[str, list[str]] = {}
    for row_id in row_ids:
        items.setdefault(item_of(row_id), []).append(row_id)
    return {item: tuple(rows) for item, rows in items.items()}


def align(run_items: Mapping[str, tuple[str, ...]], published_items: Mapping[str, tuple[str, ...]]) -> Alignment:
    matched, missing, different = [], [], []
    for item, rows in run_items.items():
        theirs = published_items.get(item)
        if theirs is None:
            missing.append(item)
        elif set(theirs) == set(rows):
            matched.append(item)
        else:
            different.append(item)
    extra = [item for item in published_items if item not in run_items]
    return Alignment(len(run_items), tuple(matched), tuple(missing), tuple(extra), tuple(different))


def file_words(origin: str, coverage: str | None, description: str | None) -> str:
    """The published file's data, in words, for `check`'s refusal: where it is, what it holds (its reader's
    `coverage`) and its registry entry's description (which says when its authors publish only part of the
    benchmark)."""
    words = f"{origin} (the file records no dataset revision)"
    if coverage:
        words += f", which holds {coverage}"
    return words + (f". Its registry entry: {description}" if description else "")


def check(alignment: Alignment, name: str, what: str, this_data: str, their_data: str) -> None:
    """Stop when fewer than MIN_MATCHED of this run's items match: one error naming both sides' data."""
    if alignment.fraction >= MIN_MATCHED:
        return
    raise RmevalError(f"model {name!r}: {what}: {alignment.words()}; at least {100 * MIN_MATCHED:.0f} % of this "
                      f"run's items must match. This run's data: {this_data}; the file's: {their_data}")
