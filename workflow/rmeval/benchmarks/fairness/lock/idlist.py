"""Fetch exact arXiv ids (with versions) through the API's `id_list`: batched, rate-limited, retried and
cached exactly like the search path (`rmeval.benchmarks.fairness.arxiv.api.ApiFetcher`), one cached page per batch."""

from __future__ import annotations

import sys
from typing import Any

from rmeval.benchmarks.fairness.arxiv.api import ApiFetcher, ApiSettings
from rmeval.benchmarks.fairness.arxiv.records import canonical_id

DEFAULT_BATCH = 100  # ids per request: ~1.5 kB of URL, well inside what export.arxiv.org accepts


class IdListFetcher(ApiFetcher):
    """One batch of ids; the cache key is the batch (so a rerun re-sends nothing)."""

    def __init__(self, settings: ApiSettings, ids: list[str]) -> None:
        self.ids = list(ids)
        super().__init__(settings, "id_list=" + ",".join(self.ids))

    def _search(self, start: int) -> Any:
        import arxiv

        return arxiv.Search(id_list=self.ids, max_results=len(self.ids))


def fetch_ids(versioned_ids: list[str], settings: ApiSettings, batch: int = DEFAULT_BATCH) -> dict[str, dict[str, Any]]:
    """canonical id -> API entry (id with version, title, abstract, categories) for every id the API returned.

    Ids the API does not know (withdrawn and removed, mistyped) are simply absent from the result."""
    size = max(1, min(batch, settings.page_size))
    found: dict[str, dict[str, Any]] = {}
    sent = cached = 0
    for start in range(0, len(versioned_ids), size):
        fetcher = IdListFetcher(settings, versioned_ids[start : start + size])
        page = fetcher.page(0)
        sent += fetcher.pages_fetched
        cached += fetcher.pages_from_cache
        for entry in page["entries"]:
            if entry.get("id"):
                found[canonical_id(str(entry["id"]))] = entry
    print(f"arXiv id_list: {len(versioned_ids)} ids in {sent + cached} batches ({cached} from the cache), "
          f"{len(found)} returned", file=sys.stderr)
    return found
