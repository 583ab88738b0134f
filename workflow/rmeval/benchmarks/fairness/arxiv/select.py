"""Cross-group title filter and the balanced seeded sample; writes results/data/{group}.parquet + manifest.

Exact counts come from each group's eligible log (two 64-bit hashes per eligible paper): duplicates by id
are removed, then a title seen in more than one group is dropped from all of them (the paper's
shared-prompt filter). The sample is the papers with the smallest seeded keys among what is left.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.arxiv.categories import check_disjoint, load_table, resolve_group
from rmeval.benchmarks.fairness.arxiv.fetch import output_paths
from rmeval.benchmarks.fairness.arxiv.sampling import read_eligible_log
from rmeval.benchmarks.fairness.arxiv.settings import ArxivSettings
from rmeval.errors import RmevalError
from rmeval.io.atomic import write_json_atomic, write_parquet_atomic
from rmeval.io.clock import utc_now
from rmeval.io.hashing import sha256_file

DATA_COLUMNS = ["id", "title", "abstract", "categories", "group"]


@dataclass
class GroupPool:
    name: str
    summary: dict[str, Any]
    candidates: Any  # DataFrame sorted by sample_key
    unique_titles: Any  # numpy uint64 array
    title_per_paper: Any  # numpy uint64 array, one per unique id
    eligible_rows: int


def load_pool(group: str, candidates_dir: Path) -> GroupPool:
    import numpy as np
    import pandas as pd

    paths = output_paths(candidates_dir, group)
    for path in paths.values():
        if not path.is_file():
            raise RmevalError(
                f"group {group!r}: {path} is missing; run `rmeval arxiv-fetch --group {group}` first"
            )
    summary = json.loads(paths["summary"].read_text(encoding="utf-8"))
    log = read_eligible_log(paths["eligible"])
    _, first = np.unique(log[:, 0], return_index=True)
    title_per_paper = log[first, 1]
    candidates = pd.read_parquet(paths["candidates"]).sort_values(["sample_key", "id"], kind="stable")
    return GroupPool(
        group,
        summary,
        candidates.reset_index(drop=True),
        np.unique(title_per_paper),
        title_per_paper,
        len(log),
    )


def content_sha256(frame: Any) -> str:
    """Hash of the rows themselves (tab-separated, sorted by id): stable across parquet writer versions."""
    digest = hashlib.sha256()
    for row in frame[DATA_COLUMNS].itertuples(index=False):
        digest.update(("\t".join(str(v) for v in row) + "\n").encode("utf-8"))
    return digest.hexdigest()


def select_groups(
    groups: list[str], settings: ArxivSettings, candidates_dir: Path, out_dir: Path
) -> dict[str, Any]:
    import numpy as np

    if len(set(groups)) != len(groups):
        raise RmevalError(f"groups: duplicate group names in {groups}")
    pools = {g: load_pool(g, Path(candidates_dir)) for g in groups}
    _check_fetch_settings(pools, settings)

    counts_of_title = np.unique(np.concatenate([p.unique_titles for p in pools.values()]), return_counts=True)
    shared_titles = counts_of_title[0][counts_of_title[1] > 1]

    plans: dict[str, dict[str, Any]] = {}
    for g, pool in pools.items():
        shared = np.isin(pool.title_per_paper, shared_titles)
        keep = ~np.isin(pool.candidates["title_hash"].to_numpy(dtype="uint64"), shared_titles)
        available = pool.candidates[keep]
        counts = dict(pool.summary["counts"])
        counts["duplicate_ids"] = pool.eligible_rows - len(pool.title_per_paper)
        counts["eligible"] = len(pool.title_per_paper)
        counts["shared_title_dropped"] = int(shared.sum())
        counts["after_title_filter"] = counts["eligible"] - counts["shared_title_dropped"]
        counts["candidate_pool"] = len(pool.candidates)
        counts["candidate_pool_after_title_filter"] = len(available)
        plans[g] = {"available": available, "counts": counts, "source_kind": pool.summary["source"].get("kind")}

    n_per_group = _sample_sizes(plans, settings)
    selected_at = utc_now()
    written: dict[str, Any] = {}
    frames = {}
    versions: dict[str, dict[str, str]] = {}
    for g, plan in plans.items():
        chosen = plan["available"].head(n_per_group[g])
        frame = chosen[DATA_COLUMNS].sort_values("id").reset_index(drop=True)
        _validate_rows(g, frame)
        frames[g] = frame
        versions[g] = paper_versions(chosen, frame)
    for g, frame in frames.items():  # only after every group passed its checks
        out = Path(out_dir) / f"{g}.parquet"
        write_parquet_atomic(frame, out)
        counts = plans[g]["counts"]
        counts["sampled"] = len(frame)
        pool = pools[g]
        manifest = {
            "group": g,
            "categories": pool.summary["categories"],
            "canonical_categories": pool.summary["canonical_categories"],
            "source": pool.summary["source"],
            "date": {"fetched_at": pool.summary["fetched_at"], "selected_at": selected_at},
            "seed": settings.seed,
            "papers_per_group": settings.papers_per_group,
            "allow_fewer": settings.allow_fewer or False,
            "settings": pool.summary["settings"],
            "counts": counts,
            "problems": pool.summary.get("problems", {}),
            "categories_table": pool.summary.get("categories_table"),
            "output": {
                "path": str(out),
                "rows": len(frame),
                "sha256": sha256_file(out),
                "content_sha256": content_sha256(frame),
                "columns": DATA_COLUMNS,
            },
            "groups_compared_for_titles": sorted(pools),
            # id -> version ('v2') of every sampled paper, in table order: what `results/lock.yaml` records.
            "versions": versions[g],
            "rmeval_version": _version(),
        }
        write_json_atomic(manifest, Path(out_dir) / f"{g}.manifest.json", sort_keys=False, ensure_ascii=False)
        written[g] = manifest
    return written


def paper_versions(candidates: Any, frame: Any) -> dict[str, str]:
    """id -> version of the table's papers, from the candidates' `version` column ('' for older pools)."""
    if "version" not in candidates.columns:
        return {str(paper_id): "" for paper_id in frame["id"]}
    by_id = dict(zip(candidates["id"].astype(str), candidates["version"].fillna("").astype(str), strict=True))
    return {str(paper_id): by_id.get(str(paper_id), "") for paper_id in frame["id"]}


def _check_fetch_settings(pools: dict[str, GroupPool], settings: ArxivSettings) -> None:
    for g, pool in pools.items():
        fetched = pool.summary.get("settings", {})
        if fetched.get("seed") != settings.seed:
            raise RmevalError(
                f"group {g!r}: candidates were fetched with arxiv.seed={fetched.get('seed')}, "
                f"but select runs with seed {settings.seed}; re-run arxiv-fetch"
            )
        if pool.summary.get("candidate_capacity", 0) < settings.papers_per_group:
            raise RmevalError(
                f"group {g!r}: candidate pool holds at most {pool.summary.get('candidate_capacity')} papers, fewer "
                f"than arxiv.papers_per_group={settings.papers_per_group}; re-run arxiv-fetch with these settings"
            )
    sources = {
        json.dumps(p.summary["source"].get("sha256") or p.summary["source"].get("base_url"))
        for p in pools.values()
    }
    if len(sources) > 1:
        print(
            "warning: groups were fetched from different sources; see each manifest's `source`",
            file=sys.stderr,
        )
    table = load_table(settings.categories_table)
    check_disjoint({g: resolve_group(g, p.summary["categories"], table) for g, p in pools.items()})


def _sample_sizes(plans: dict[str, dict[str, Any]], settings: ArxivSettings) -> dict[str, int]:
    target = settings.papers_per_group
    short = {g: p for g, p in plans.items() if len(p["available"]) < target}
    if not short:
        return {g: target for g in plans}
    lines = []
    for g, plan in short.items():
        c = plan["counts"]
        steps = ", ".join(f"{k}={v}" for k, v in c.items() if v)
        why = _shortage_reason(c, target, plan.get("source_kind"))
        lines.append(f"  {g}: {len(plan['available'])} papers < {target}: {why}; counts: {steps}")
    detail = "\n".join(lines)
    if settings.allow_fewer is None:
        raise RmevalError(
            f"{len(short)} group(s) have fewer than arxiv.papers_per_group={target} papers:\n{detail}\n"
            "Set arxiv.allow_fewer: balanced (cut every group to the smallest) or keep (keep what each has)."
        )
    if settings.allow_fewer == "balanced":
        smallest = min(len(p["available"]) for p in plans.values())
        print(f"warning: allow_fewer=balanced: every group gets {smallest} papers\n{detail}", file=sys.stderr)
        return {g: smallest for g in plans}
    print(f"warning: allow_fewer=keep: short groups keep what they have\n{detail}", file=sys.stderr)
    return {g: min(target, len(p["available"])) for g, p in plans.items()}


def _shortage_reason(c: dict[str, int], target: int, source_kind: str | None) -> str:
    """Why a group came up short, from its filter counts: the way out differs with the cause."""
    if c["after_title_filter"] >= target:
        return "the candidate pool ran out (raise arxiv.candidate_factor)"
    missing = {k: c.get(k, 0) for k in ("no_categories", "empty_title", "empty_abstract") if c.get(k, 0)}
    if missing and sum(missing.values()) >= c.get("eligible", 0):
        fields = ", ".join(f"{k}={v}" for k, v in missing.items())
        return (f"many records lack a field the filter needs ({fields}); check the snapshot's `categories`, "
                f"`title` and `abstract` against config/README.md, \"Snapshot format\"")
    if c.get("outside_dates", 0) >= c.get("eligible", 0) and c.get("outside_dates", 0):
        return "not enough eligible papers: the date window (arxiv.date_from, arxiv.date_to) left out most; widen it"
    if source_kind == "api":
        return "not enough eligible papers (widen the date window or raise arxiv.api.max_results)"
    return "not enough eligible papers (use a larger snapshot or a wider date window)"


def _validate_rows(group: str, frame: Any) -> None:
    if frame.empty:
        raise RmevalError(f"group {group!r}: no papers left to write")
    if frame["id"].duplicated().any():
        raise RmevalError(f"group {group!r}: duplicate id {frame['id'][frame['id'].duplicated()].iloc[0]}")
    for column in ("title", "abstract"):
        empty = frame[column].fillna("").str.strip() == ""
        if empty.any():
            raise RmevalError(f"group {group!r}: empty {column} for id {frame['id'][empty].iloc[0]}")


def _version() -> str:
    from rmeval import __version__

    return __version__
