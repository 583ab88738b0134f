"""UTC timestamps as recorded in manifests and markers: `2026-12-01T11:20:18Z` (seconds, `Z`)."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
