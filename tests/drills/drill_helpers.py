"""Small, self-made inputs for the reliability drills: synthetic arXiv papers, a loopback Atom server that
answers the arXiv API's queries from them, a Kaggle-format snapshot, and a two-group workflow config."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

import yaml
from workflow_helpers import REPO_ROOT

DRILL_GROUPS: dict[str, list[str]] = {"mathematics": ["math"], "economics": ["econ"]}
_CATEGORIES = {"mathematics": ["math.AG", "math.PR", "math.NT"], "economics": ["econ.EM", "econ.GN", "econ.TH"]}
_WORDS = ("we study estimate prove model market curve prime random walk auction equilibrium variety sheaf "
          "measure panel data policy growth bound operator lattice inflation labour").split()


@dataclass(frozen=True)
class SyntheticPaper:
    id: str
    title: str
    abstract: str
    categories: tuple[str, ...]
    published: str  # YYYY-MM-DD


def synthetic_papers(per_group: int, seed: int = 0) -> list[SyntheticPaper]:
    """`per_group` single-group papers for each drill group, with distinct titles and varied lengths."""
    rng = random.Random(seed)
    papers = []
    for g_index, group in enumerate(DRILL_GROUPS):
        for i in range(per_group):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 60))]
            papers.append(SyntheticPaper(
                id=f"24{g_index + 1:02d}.{i:05d}",
                title=f"{group.title()} study {i}: {' '.join(rng.choice(_WORDS) for _ in range(4))}",
                abstract=" ".join(words).capitalize() + ".",
                categories=(rng.choice(_CATEGORIES[group]),),
                published=f"2024-{1 + i % 12:02d}-{1 + i % 27:02d}",
            ))
    return papers


def kaggle_line(paper: SyntheticPaper) -> dict:
    return {"id": paper.id, "submitter": None, "authors": "A. Author", "title": paper.title, "comments": None,
            "journal-ref": None, "doi": None, "report-no": None, "categories": " ".join(paper.categories),
            "license": None, "abstract": "  " + paper.abstract + "\n",
            "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
            "update_date": "2023-01-01", "authors_parsed": []}


def write_snapshot(papers: list[SyntheticPaper], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(kaggle_line(p)) + "\n" for p in papers), encoding="utf-8")
    return path


def _atom_entry(paper: SyntheticPaper) -> str:
    categories = "".join(f'<category term="{c}" scheme="http://arxiv.org/schemas/atom"/>' for c in paper.categories)
    return (
        f"<entry><id>http://arxiv.org/abs/{paper.id}v1</id>"
        f"<updated>{paper.published}T00:00:00Z</updated><published>{paper.published}T00:00:00Z</published>"
        f"<title>{escape(paper.title)}</title><summary>{escape(paper.abstract)}</summary>"
        f"<author><name>A. Author</name></author>"
        f'<link href="http://arxiv.org/abs/{paper.id}v1" rel="alternate" type="text/html"/>'
        f'<arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="{paper.categories[0]}" '
        f'scheme="http://arxiv.org/schemas/atom"/>{categories}</entry>'
    )


def atom_feed(papers: list[SyntheticPaper], start: int, total: int) -> bytes:
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom" '
        'xmlns="http://www.w3.org/2005/Atom"><id>https://arxiv.org/api/drill</id><title>arXiv Query</title>'
        "<updated>2026-01-01T00:00:00Z</updated>"
        f"<opensearch:itemsPerPage>{len(papers)}</opensearch:itemsPerPage>"
        f"<opensearch:totalResults>{total}</opensearch:totalResults>"
        f"<opensearch:startIndex>{start}</opensearch:startIndex>"
        + "".join(_atom_entry(p) for p in papers) + "</feed>\n"
    ).encode("utf-8")


@dataclass
class AtomServer:
    """A loopback arXiv API: answers `cat:` queries from `papers`, newest first, page by page.

    `faults` is a queue of fault names served before normal answers (one per request): "503", "slow"
    (sleeps `slow_s` before answering), "garbage" (200 with a body that is not XML), "half" (200 with the
    XML cut in the middle). The first `clean_requests` requests are answered without faults. `delay_s`
    slows every answer (to kill a job mid-download).
    """

    papers: list[SyntheticPaper]
    delay_s: float = 0.0
    slow_s: float = 2.0
    faults: list[str] = field(default_factory=list)
    clean_requests: int = 0
    requests: list[tuple[str, int]] = field(default_factory=list)  # (query, start) of every request
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                query = parse_qs(urlsplit(self.path).query)
                search = query.get("search_query", [""])[0]
                start = int(query.get("start", ["0"])[0])
                size = int(query.get("max_results", ["10"])[0])
                with server.lock:
                    server.requests.append((search, start))
                    faulty = server.faults and len(server.requests) > server.clean_requests
                    fault = server.faults.pop(0) if faulty else None
                if server.delay_s:
                    time.sleep(server.delay_s)
                terms = {t.strip("()") for t in re.findall(r"cat:(\S+)", search)}
                matching = [p for p in server.papers if set(p.categories) <= terms]
                matching.sort(key=lambda p: (p.published, p.id), reverse=True)
                body = atom_feed(matching[start:start + size], start, len(matching))
                status = 200
                if fault == "503":
                    status, body = 503, b"Service Unavailable"
                elif fault == "slow":
                    time.sleep(server.slow_s)
                elif fault == "garbage":
                    body = b"<html><body>Proxy error: upstream <b>unavailable</b></html>"
                elif fault == "half":
                    body = body[: len(body) // 2]
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/atom+xml")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out first
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/api/query"

    def request_counts(self) -> Counter:
        with self.lock:
            return Counter(self.requests)

    def __enter__(self) -> AtomServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def api_block(url: str, cache_dir: Path, **overrides: object) -> dict:
    """`arxiv.api` settings for a loopback server: small pages, short spacing and back-off."""
    return {"base_url": url, "page_size": 4, "delay_seconds": 0.05, "retries": 3, "backoff_seconds": 0.05,
            "timeout_seconds": 5.0, "max_results": 200, "cache_dir": str(cache_dir), **overrides}


def drill_config(path: Path, models: list[dict], arxiv: dict, reference_model: str | None = None) -> dict:
    """A complete two-group config (the schema requires at least two groups)."""
    config = {
        "groups": DRILL_GROUPS,
        "arxiv": arxiv,
        "registry": str(REPO_ROOT / "config" / "models.yaml"),
        "models": models,
        "reference_model": reference_model,
        "scoring": {"threads": 1, "checkpoint_every": 4, "max_batch_rows": 4},
        "stats": {"bootstrap": 100, "permutations": 100, "seed": 0, "calibration": {"replicates": 50}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return config
