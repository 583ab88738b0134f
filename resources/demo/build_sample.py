"""Rebuild resources/demo/arxiv-sample.jsonl, the demo's arXiv sample (SOURCE.md says what it is).

    python resources/demo/build_sample.py ../shared/data/arxiv/cn_chat_arxiv_rss_2023_primary.jsonl

Reads the collected arXiv listing (arXiv's own metadata: id, title, abstract, primary category), keeps the
papers whose abstract is complete, and draws `PER_GROUP` per paper group of the demo's eight groups plus
`EXTRA_OUTSIDE` statistics papers that belong to no group (the data stage must skip them), seeded. Writes Kaggle
`arxiv-metadata-oai-snapshot` JSON lines with only the fields the sample has: `id`, `title`, `abstract`,
`categories` (the primary category: the listing does not hold the full list; an eess.SY paper also gets cs.SY,
the alias arXiv lists with every eess.SY paper). Same input, same file.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

PER_GROUP = 40
EXTRA_OUTSIDE = 8
SEED = 0
OUT = Path(__file__).with_name("arxiv-sample.jsonl")


def group_of(primary: str, archive: str) -> str | None:
    """The demo's group of a paper (config/demo.yaml's `groups`), by its primary category; `stat` is outside."""
    if archive == "eess":
        return "systems_science" if primary == "eess.SY" else "electrical_engineering"
    return {"physics": "physics", "math": "mathematics", "cs": "computer_science", "econ": "economics",
            "q-bio": "quantitative_biology", "q-fin": "quantitative_finance", "stat": "outside"}.get(archive)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("listing", type=Path, help="cn_chat_arxiv_rss_2023_primary.jsonl of the shared data")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    by_group: dict[str, list[dict]] = {}
    with args.listing.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["abstract_truncated"] or not row["primary_category"]:
                continue  # a cut abstract is not the paper's abstract
            group = group_of(row["primary_category"], row["archive_group"])
            if group:
                by_group.setdefault(group, []).append(row)
    rng = random.Random(SEED)
    records = []
    for group, rows in sorted(by_group.items()):
        rows.sort(key=lambda row: row["id"])
        for row in rng.sample(rows, EXTRA_OUTSIDE if group == "outside" else PER_GROUP):
            categories = row["primary_category"] + (" cs.SY" if row["primary_category"] == "eess.SY" else "")
            records.append({"id": row["id"], "title": " ".join(row["title"].split()),
                            "abstract": row["abstract"].strip(), "categories": categories})
    records.sort(key=lambda record: record["id"])
    args.out.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records),
                        encoding="utf-8")
    print(f"{args.out}: {len(records)} papers, {args.out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
