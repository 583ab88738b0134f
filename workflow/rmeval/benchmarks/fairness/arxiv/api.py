"""The live arXiv API source, through the `arxiv` package's Client and its real HTTP code path.

One query per group (`cat:eess.SY OR cat:cs.SY`, plus a submittedDate window), sorted by submission date,
fetched page by page. Every page is cached as JSON under the cache directory, keyed by the query, so an
interrupted download resumes where it stopped. Retries back off exponentially on 5xx/429, connection
errors and timeouts, truncated XML, and the API's known empty-page glitch.
"""

from __future__ import annotations

import ipaddress
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rmeval.benchmarks.fairness.arxiv.categories import GroupSpec
from rmeval.benchmarks.fairness.arxiv.collect import DateWindow, GroupCollector
from rmeval.benchmarks.fairness.arxiv.ratelimit import SharedRateLimiter
from rmeval.benchmarks.fairness.arxiv.records import canonical_id
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError
from rmeval.io.atomic import write_json_atomic
from rmeval.io.clock import utc_now
from rmeval.io.hashing import sha256_text

MIN_POLITE_DELAY = 3.0  # arXiv API terms of use: no more than one request every three seconds
_TOTAL = re.compile(rb"<(?:\w+:)?totalResults[^>]*>\s*(\d+)\s*<")


@dataclass
class ApiSettings:
    """The config's `arxiv.api:` section; each default is the schema's."""

    base_url: str = schema_default("arxiv.api.base_url")
    page_size: int = schema_default("arxiv.api.page_size")
    delay_seconds: float = schema_default("arxiv.api.delay_seconds")
    retries: int = schema_default("arxiv.api.retries")
    backoff_seconds: float = schema_default("arxiv.api.backoff_seconds")
    max_backoff_seconds: float = schema_default("arxiv.api.max_backoff_seconds")
    timeout_seconds: float = schema_default("arxiv.api.timeout_seconds")
    max_results: int = schema_default("arxiv.api.max_results")
    cache_dir: str = schema_default("arxiv.api.cache_dir")

    def validate(self) -> None:
        if self.page_size < 1 or self.page_size > 2000:
            raise RmevalError(f"arxiv.api.page_size must be 1..2000 (the API's limit), got {self.page_size}")
        if self.retries < 0 or self.max_results < 1 or self.timeout_seconds <= 0 or self.backoff_seconds < 0:
            raise RmevalError(
                "arxiv.api: retries >= 0, max_results >= 1, timeout_seconds > 0, backoff_seconds >= 0"
            )
        if self.delay_seconds < MIN_POLITE_DELAY and not is_loopback(self.base_url):
            raise RmevalError(
                f"arxiv.api.delay_seconds={self.delay_seconds} is below the {MIN_POLITE_DELAY:g} s between calls "
                f"that arXiv's terms require; shorter spacing is only allowed for a loopback base_url"
            )


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_query(spec: GroupSpec, window: DateWindow) -> str:
    """`cat:A OR cat:B ...` over every name of the group's categories, aliases included, plus the window."""
    query = " OR ".join(f"cat:{term}" for term in spec.query_terms())
    if window.active:
        start = window.start.strftime("%Y%m%d") + "0000" if window.start else "190001010000"
        end = window.end.strftime("%Y%m%d") + "2359" if window.end else "299912312359"
        query = f"({query}) AND submittedDate:[{start} TO {end}]"
    return query


class FeedError(Exception):
    """A 200 response whose body is not a complete Atom document (truncated XML)."""


@dataclass
class _Exchange:
    """What the response hook saw during one page call."""

    urls: list[str] = field(default_factory=list)
    total_results: int | None = None
    last_response_at: float | None = None


@dataclass
class PageCache:
    root: Path

    def page_path(self, start: int) -> Path:
        return self.root / f"start_{start:08d}.json"

    def load(self, start: int) -> dict[str, Any] | None:
        path = self.page_path(start)
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            print(f"warning: {path}: unreadable cached page; fetching it again", file=sys.stderr)
            return None

    def store(self, start: int, page: dict[str, Any]) -> None:
        write_json_atomic(page, self.page_path(start), sort_keys=False, ensure_ascii=False)


def cache_for(settings: ApiSettings, query: str) -> PageCache:
    key = json.dumps(
        {
            "base_url": settings.base_url,
            "query": query,
            "page_size": settings.page_size,
            "sort": "submittedDate-desc",
        },
        sort_keys=True,
    )
    root = Path(settings.cache_dir) / sha256_text(key)[:20]
    root.mkdir(parents=True, exist_ok=True)
    description = root / "query.json"
    if not description.exists():
        write_json_atomic(json.loads(key), description, sort_keys=False, ensure_ascii=False)
    return PageCache(root)


class ApiFetcher:
    """Pages through one query with the arxiv Client; owns retries, caching and cross-process spacing."""

    def __init__(self, settings: ApiSettings, query: str) -> None:
        import arxiv
        import requests
        from requests.adapters import HTTPAdapter

        settings.validate()
        self.settings = settings
        self.query = query
        self.cache = cache_for(settings, query)
        self.limiter = SharedRateLimiter(
            Path(settings.cache_dir) / ".api-spacing.lock", settings.delay_seconds
        )
        # num_retries=0: retries are ours, with back-off; the Client still enforces delay_seconds itself.
        self.client = arxiv.Client(
            page_size=settings.page_size, delay_seconds=settings.delay_seconds, num_retries=0
        )
        self.client.query_url_format = settings.base_url.rstrip("?") + "?{}"
        session = getattr(self.client, "_session", None)
        if not isinstance(session, requests.Session):
            raise RmevalError("the installed `arxiv` package has no requests session; install arxiv>=2.1")
        timeout = settings.timeout_seconds

        class _TimeoutAdapter(HTTPAdapter):  # the Client sends without a timeout; a stalled socket must fail
            def send(self, request: Any, **kwargs: Any) -> Any:
                if kwargs.get("timeout") is None:
                    kwargs["timeout"] = timeout
                return super().send(request, **kwargs)

        session.mount("http://", _TimeoutAdapter())
        session.mount("https://", _TimeoutAdapter())
        session.hooks["response"].append(self._on_response)
        self._exchange = _Exchange()
        self.known_total: int | None = None
        self.pages_fetched = 0
        self.pages_from_cache = 0
        self.requests_sent = 0
        self.retries_done = 0

    def _on_response(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        from lxml import etree

        self.requests_sent += 1
        self._exchange.urls.append(response.url)
        self._exchange.last_response_at = time.time()
        self.limiter.last_response_at = self._exchange.last_response_at
        if response.status_code == 200:
            body = response.content
            try:  # strict parse: the Client's parser recovers from truncation and would keep partial entries
                etree.fromstring(body, etree.XMLParser(resolve_entities=False, no_network=True))
            except etree.XMLSyntaxError as error:
                raise FeedError(f"truncated or invalid XML from {response.url}: {error}") from error
            match = _TOTAL.search(body)
            if match:
                self._exchange.total_results = int(match.group(1))
        return response

    def _search(self, start: int) -> Any:
        import arxiv

        return arxiv.Search(
            query=self.query,
            max_results=start + self.settings.page_size,
            sort_by=arxiv.SortCriterion.SubmittedDate,
            sort_order=arxiv.SortOrder.Descending,
        )

    def page(self, start: int) -> dict[str, Any]:
        """Page [start, start + page_size): from the cache, else from the API with retries."""
        cached = self.cache.load(start)
        if cached is not None:
            self.pages_from_cache += 1
            if cached.get("total_results") is not None:
                self.known_total = max(self.known_total or 0, int(cached["total_results"]))
            return cached
        import arxiv
        import requests

        last_error = ""
        for attempt in range(self.settings.retries + 1):
            if attempt:
                self.retries_done += 1
                wait = min(
                    self.settings.backoff_seconds * 2 ** (attempt - 1), self.settings.max_backoff_seconds
                )
                print(
                    f"retry {attempt}/{self.settings.retries} of page start={start} in {wait:g} s: {last_error}",
                    file=sys.stderr,
                )
                time.sleep(wait)
            self._exchange = _Exchange()
            try:
                with self.limiter:
                    results = list(self.client.results(self._search(start), offset=start))
            except arxiv.HTTPError as error:
                if error.status >= 500 or error.status == 429:
                    last_error = f"HTTP {error.status}"
                    continue
                raise RmevalError(
                    f"arXiv API refused the query with HTTP {error.status} ({error.url}); check arxiv.api settings"
                ) from error
            except (requests.exceptions.RequestException, FeedError, arxiv.UnexpectedEmptyPageError) as error:
                last_error = f"{type(error).__name__}: {error}"
                continue
            total = self._exchange.total_results
            if total is not None and total > 0:
                self.known_total = max(self.known_total or 0, total)
            if not results and self.known_total is not None and start < self.known_total:
                last_error = f"empty page although the query has {self.known_total} results (API glitch)"
                continue
            page = {
                "start": start,
                "page_size": self.settings.page_size,
                "urls": self._exchange.urls,
                "fetched_at": utc_now(),
                "total_results": self.known_total if self.known_total is not None else total,
                "entries": [_entry(result) for result in results],
            }
            self.cache.store(start, page)
            self.pages_fetched += 1
            return page
        raise RmevalError(
            f"arXiv API: page start={start} failed after {self.settings.retries + 1} tries ({last_error}); "
            f"pages already downloaded are cached in {self.cache.root}, re-run to resume"
        )


def _entry(result: Any) -> dict[str, Any]:
    return {
        "id": result.get_short_id(),
        "title": result.title,
        "abstract": result.summary,
        "categories": list(result.categories),
        "primary_category": result.primary_category,
        "published": result.published.date().isoformat() if result.published else None,
    }


def fetch_group(
    spec: GroupSpec, collector: GroupCollector, settings: ApiSettings, target: int
) -> dict[str, Any]:
    """Fetch pages until `target` unique eligible papers, the end of the results, or max_results."""
    from datetime import date

    query = build_query(spec, collector.window)
    fetcher = ApiFetcher(settings, query)
    eligible_ids: set[str] = set()  # bounded by max_results
    start = 0
    records = 0
    first_fetch: str | None = None
    last_fetch: str | None = None
    while start < settings.max_results:
        page = fetcher.page(start)
        entries = page["entries"]
        first_fetch = min(first_fetch or page["fetched_at"], page["fetched_at"])
        last_fetch = max(last_fetch or page["fetched_at"], page["fetched_at"])
        for offset, entry in enumerate(entries):
            if records >= settings.max_results:
                break
            records += 1
            before = collector.counts["eligible_with_duplicates"]
            published = entry.get("published")
            collector.offer(
                entry.get("id"),
                entry.get("categories"),
                entry.get("title"),
                entry.get("abstract"),
                f"API page start={start} entry {offset}",
                date.fromisoformat(published) if published else None,
            )
            if collector.counts["eligible_with_duplicates"] > before:
                eligible_ids.add(canonical_id(entry["id"]))
        total = page.get("total_results")
        if len(eligible_ids) >= target or len(entries) < settings.page_size:
            break  # enough papers, or a short page: the Client has already checked it against the total
        # Pages are cached by their start, so the next start stays on the page grid.
        start += settings.page_size
        if total is not None and start >= int(total):
            break
    collector.counts["records_read"] = records
    collector.report_unknown(f"API query {query!r}")
    return {
        "kind": "api",
        "base_url": settings.base_url,
        "query": query,
        "sort": "submittedDate descending",
        "date_from": collector.window.start.isoformat() if collector.window.start else None,
        "date_to": collector.window.end.isoformat() if collector.window.end else None,
        "total_results": fetcher.known_total,
        "records_fetched": records,
        "pages_downloaded": fetcher.pages_fetched,
        "pages_from_cache": fetcher.pages_from_cache,
        "requests_sent": fetcher.requests_sent,
        "retries": fetcher.retries_done,
        "downloaded_from": first_fetch,
        "downloaded_to": last_fetch,
        "cache_dir": str(fetcher.cache.root),
        "settings": asdict(settings),
        "client": f"arxiv {_arxiv_version()}",
    }


def _arxiv_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arxiv")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"
