"""Run one group's fetch (either source) and write its candidate pool, eligible log and counts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.arxiv.categories import load_table, resolve_group
from rmeval.benchmarks.fairness.arxiv.collect import GroupCollector
from rmeval.benchmarks.fairness.arxiv.records import normalized_title_hash
from rmeval.benchmarks.fairness.arxiv.sampling import EligibleLog, HashSampler
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.errors import RmevalError
from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
from rmeval.io.clock import utc_now


def output_paths(out_dir: Path, group: str) -> dict[str, Path]:
    return {
        "candidates": out_dir / f"{group}.candidates.parquet",
        "eligible": out_dir / f"{group}.eligible.u64",
        "summary": out_dir / f"{group}.fetch.json",
    }


def fetch_candidates(
    group: str, categories: list[str], settings: ArxivSettings, out_dir: Path
) -> dict[str, Any]:
    table = load_table(settings.categories_table)
    spec = resolve_group(group, categories, table)
    paths = output_paths(Path(out_dir), group)
    for path in paths.values():  # never leave an older run's files looking like this run's
        path.unlink(missing_ok=True)
    sampler = HashSampler(settings.candidate_capacity, settings.seed)
    log = EligibleLog(paths["eligible"])
    collector = GroupCollector(spec, sampler, log, settings.window)
    started = time.perf_counter()
    fetched_at = utc_now()
    try:
        if settings.source == "snapshot":
            if not settings.snapshot:
                raise RmevalError("arxiv.snapshot: no snapshot path given (arxiv.source is 'snapshot')")
            from rmeval.benchmarks.fairness.arxiv.snapshot import stream_snapshot

            source = stream_snapshot(settings.snapshot, collector)
        else:
            from rmeval.benchmarks.fairness.arxiv.api import fetch_group

            source = fetch_group(spec, collector, settings.api, target=settings.candidate_capacity)
        write_parquet_atomic(_candidate_frame(group, sampler), paths["candidates"])
        log.close()
    except BaseException:
        log.discard()
        paths["candidates"].unlink(missing_ok=True)
        raise
    summary = {
        "group": group,
        "categories": list(categories),
        "canonical_categories": spec.canonical_list(),
        "source": source,
        "fetched_at": fetched_at,
        "wall_seconds": round(time.perf_counter() - started, 3),
        "settings": settings.describe(),
        "candidate_capacity": settings.candidate_capacity,
        "candidates": len(sampler),
        "counts": collector.ordered_counts(),
        "problems": collector.problems.totals,
        "unknown_categories": dict(sorted(collector.unknown_categories.items(), key=lambda kv: -kv[1])[:50]),
        "categories_table": {"path": table.path, "sha256": table.sha256},
    }
    write_json_atomic(summary, paths["summary"], sort_keys=False, ensure_ascii=False)
    return summary


def _candidate_frame(group: str, sampler: HashSampler) -> Any:
    import pandas as pd

    items = sampler.sorted_items()
    return pd.DataFrame(
        {
            "id": pd.Series([p.id for _, p in items], dtype="string"),
            "title": pd.Series([p.title for _, p in items], dtype="string"),
            "abstract": pd.Series([p.abstract for _, p in items], dtype="string"),
            "categories": pd.Series([" ".join(p.categories) for _, p in items], dtype="string"),
            "group": pd.Series([group] * len(items), dtype="string"),
            "sample_key": pd.Series([k for k, _ in items], dtype="uint64"),
            "title_hash": pd.Series([normalized_title_hash(p.title) for _, p in items], dtype="uint64"),
            "origin": pd.Series([p.origin for _, p in items], dtype="string"),
            "version": pd.Series([p.version for _, p in items], dtype="string"),
        }
    )
