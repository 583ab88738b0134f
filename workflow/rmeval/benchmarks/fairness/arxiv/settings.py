"""The `arxiv:` section of the config, parsed into dataclasses with the schema's defaults; errors name the key."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Any

from rmeval.benchmarks.fairness.arxiv.api import ApiSettings
from rmeval.benchmarks.fairness.arxiv.collect import DateWindow
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError

SOURCES = ("snapshot", "api", "lock")  # lock: rebuild the groups of `lock:` (rmeval.benchmarks.fairness.lock.rebuild)
FEWER_POLICIES = ("balanced", "keep")


def parse_day(value: Any, key: str) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return datetime.strptime(str(value), "%Y-%m-%d").date()
    except ValueError as error:
        raise RmevalError(f"{key}: expected a date YYYY-MM-DD, got {value!r}") from error


def parse_allow_fewer(value: Any) -> str | None:
    """false -> None (fail); true or 'balanced' -> every group cut to the smallest; 'keep' -> keep what exists."""
    if value is None or value is False or (isinstance(value, str) and value.lower() in {"false", "no", "0"}):
        return None
    if value is True or (isinstance(value, str) and value.lower() in {"true", "yes", "1"}):
        return "balanced"
    if isinstance(value, str) and value in FEWER_POLICIES:
        return value
    raise RmevalError(f"arxiv.allow_fewer: expected false, true, 'balanced' or 'keep', got {value!r}")


@dataclass
class ArxivSettings:
    # The config must name its source (the schema has no default); a Python caller or a fetch run by hand that
    # names none reads a snapshot.
    source: str = "snapshot"
    snapshot: str | None = None  # required by the source snapshot: no default
    papers_per_group: int = schema_default("arxiv.papers_per_group")
    seed: int = schema_default("arxiv.seed")
    allow_fewer: str | None = parse_allow_fewer(schema_default("arxiv.allow_fewer"))
    candidate_factor: float = schema_default("arxiv.candidate_factor")
    date_from: date | None = parse_day(schema_default("arxiv.date_from"), "arxiv.date_from")
    date_to: date | None = parse_day(schema_default("arxiv.date_to"), "arxiv.date_to")
    categories_table: str | None = schema_default("arxiv.categories_table")
    api: ApiSettings = field(default_factory=ApiSettings)

    @property
    def window(self) -> DateWindow:
        return DateWindow(self.date_from, self.date_to)

    @property
    def candidate_capacity(self) -> int:
        """How many candidates a fetch keeps: room for papers the cross-group title filter will drop."""
        import math

        return max(self.papers_per_group, math.ceil(self.papers_per_group * self.candidate_factor))

    @classmethod
    def from_mapping(cls, raw: dict[str, Any] | None) -> ArxivSettings:
        raw = dict(raw or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise RmevalError(
                f"arxiv: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        api_raw = dict(raw.pop("api", None) or {})
        api_known = {f.name for f in fields(ApiSettings)}
        bad_api = sorted(set(api_raw) - api_known)
        if bad_api:
            raise RmevalError(
                f"arxiv.api: unknown key(s) {', '.join(bad_api)}; known: {', '.join(sorted(api_known))}"
            )
        settings = cls(api=ApiSettings(**api_raw))
        for key, value in raw.items():
            setattr(settings, key, value)
        settings.normalise()
        return settings

    def normalise(self) -> None:
        """Coerce types and check ranges (also after command-line overrides)."""
        if self.source not in SOURCES:
            raise RmevalError(f"arxiv.source: expected one of {', '.join(SOURCES)}, got {self.source!r}")
        for key in ("papers_per_group", "seed"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RmevalError(f"arxiv.{key}: expected an integer, got {value!r}")
        if self.papers_per_group < 1:
            raise RmevalError(f"arxiv.papers_per_group: must be at least 1, got {self.papers_per_group}")
        if not isinstance(self.candidate_factor, (int, float)) or self.candidate_factor < 1:
            raise RmevalError(f"arxiv.candidate_factor: must be a number >= 1, got {self.candidate_factor!r}")
        self.allow_fewer = parse_allow_fewer(self.allow_fewer)
        self.date_from = parse_day(self.date_from, "arxiv.date_from")
        self.date_to = parse_day(self.date_to, "arxiv.date_to")
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise RmevalError(f"arxiv.date_from ({self.date_from}) is after arxiv.date_to ({self.date_to})")
        api = self.api
        for key, kind in (("page_size", int), ("retries", int), ("max_results", int)):
            if isinstance(getattr(api, key), bool) or not isinstance(getattr(api, key), kind):
                raise RmevalError(f"arxiv.api.{key}: expected an integer, got {getattr(api, key)!r}")
        for key in ("delay_seconds", "backoff_seconds", "max_backoff_seconds", "timeout_seconds"):
            if isinstance(getattr(api, key), bool) or not isinstance(getattr(api, key), (int, float)):
                raise RmevalError(f"arxiv.api.{key}: expected a number, got {getattr(api, key)!r}")
        if self.source == "api":
            api.validate()

    def describe(self) -> dict[str, Any]:
        """JSON-able view for manifests."""
        return {
            "source": self.source,
            "snapshot": self.snapshot,
            "papers_per_group": self.papers_per_group,
            "seed": self.seed,
            "allow_fewer": self.allow_fewer or False,
            "candidate_factor": self.candidate_factor,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
        }
