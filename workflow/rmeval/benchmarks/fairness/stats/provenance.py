"""Where the analysed data came from.

Manifests (`{group}.manifest.json`, written by `arxiv-select`) are read only from the folder given with
`--manifests` (the workflow passes `results/data`); without it the data source is "not recorded", never
guessed from whatever an earlier run left in the working directory.

Each table's note names the source in one short sentence (`source_sentence`): the kind of source, the
date window, the fetch date and a short hash of the sampled papers. The full record (every manifest's
source, counts and output hashes, and every score file's sha256 and scoring metadata) goes to
`provenance.json` and `provenance.md`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rmeval.benchmarks.fairness.stats.loading import ScoreSet
from rmeval.errors import RmevalError
from rmeval.io.hashing import sha256_file, sha256_text

SHORT_HASH = 8  # hex digits of the sample hash shown in table notes
PROVENANCE_STEM = "provenance"


def read_manifests(manifest_dir: Path | None, groups: list[str]) -> dict[str, dict[str, Any]]:
    """Manifests by group from `manifest_dir` only; None -> none read. A manifest that exists but is not a
    JSON object is an error naming it (a truncated file must not pass as "no manifest")."""
    found: dict[str, dict[str, Any]] = {}
    if manifest_dir is None or not manifest_dir.is_dir():
        return found
    for group in groups:
        path = manifest_dir / f"{group}.manifest.json"
        if not path.exists():
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RmevalError(f"--manifests: {path} is not readable JSON ({error})") from error
        if not isinstance(document, dict):
            raise RmevalError(f"--manifests: {path} holds {type(document).__name__}, expected a JSON object")
        found[group] = document
    return found


def check_row_counts(scores: ScoreSet, manifests: dict[str, dict[str, Any]], manifest_dir: Path) -> None:
    """Every score file holds every row of its group: `output.rows` of the manifest `arxiv-select` wrote.

    A score file that lost rows (an old, partial or hand-edited file) would otherwise shift the group
    means silently; manifests without an `output.rows` count (made elsewhere) are not checked.
    """
    for model in scores.models:
        for group in model.groups:
            output = manifests.get(group.group, {}).get("output")
            expected = output.get("rows") if isinstance(output, dict) else None
            if not isinstance(expected, int) or group.n == expected:
                continue
            what = f"is missing {expected - group.n}" if group.n < expected else f"has {group.n - expected} extra"
            raise RmevalError(
                f"{group.source}: {group.n} rows, but {manifest_dir / f'{group.group}.manifest.json'} says group "
                f"{group.group!r} has {expected}; model {model.model} {what} row(s). Re-score it (delete the "
                "file and re-run the workflow) so every model is compared on the same papers"
            )


def sample_size_note(scores: ScoreSet) -> str:
    per_group: dict[str, set[int]] = {g: set() for g in scores.groups}
    for model in scores.models:
        for group in model.groups:
            per_group[group.group].add(group.n)
    parts = []
    for group, sizes in per_group.items():
        label = group.replace("_", " ")
        parts.append(f"{label} {min(sizes)}" if len(sizes) == 1 else f"{label} {min(sizes)}-{max(sizes)}")
    varies = any(len(sizes) > 1 for sizes in per_group.values())
    suffix = " (ranges: n differs between models)" if varies else ""
    return f"n per group: {', '.join(parts)}{suffix}."


# ---------------------------------------------------------------- the short sentence


def _day(value: Any) -> str | None:
    """The date part of an ISO timestamp (or of a manifest's `date`, which may be a dict of timestamps)."""
    if isinstance(value, dict):
        value = value.get("fetched_at") or value.get("selected_at") or value.get("prepared_at")
    if not value:
        return None
    return str(value)[:10]


# The demo's shipped sample (resources/demo/SOURCE.md): named as what it is, not as a snapshot fetched today.
DEMO_SAMPLE = "resources/demo/arxiv-sample.jsonl"
DEMO_SAMPLE_SHA256 = "a3e97627c38eaddf92828be23e75a4515c6717d4dab7f4fe43cd41564eaec0c9"


def is_demo_sample(manifest: dict[str, Any]) -> bool:
    source = manifest.get("source")
    return isinstance(source, dict) and source.get("kind") == "snapshot" and (
        source.get("sha256") == DEMO_SAMPLE_SHA256 or str(source.get("path", "")).endswith(DEMO_SAMPLE))


def _source_kind(manifest: dict[str, Any]) -> str:
    source = manifest.get("source")
    kind = source.get("kind") if isinstance(source, dict) else None
    if is_demo_sample(manifest):
        return (f"the shipped demo sample ({DEMO_SAMPLE}: arXiv listings of 2023-24, 40 papers per group, "
                "resources/demo/SOURCE.md)")
    if kind == "snapshot":
        return "arXiv metadata snapshot"
    if kind == "api":
        return "arXiv API"
    if kind == "corpus":  # rmeval.benchmarks.fairness.corpus: a local file or a Hugging Face dataset
        if source.get("type") == "hf":
            return f"corpus {source.get('name')} [{source.get('split')}] @ {source.get('revision') or 'unpinned'}"
        return f"corpus {Path(str(source.get('path', ''))).name} (sha256 {str(source.get('sha256', ''))[:8]})"
    if isinstance(source, str) and source:
        return source if len(source) <= 40 else source[:37] + "..."
    return "unrecorded source"


def _window(manifest: dict[str, Any]) -> tuple[str | None, str | None]:
    settings = manifest.get("settings") if isinstance(manifest.get("settings"), dict) else {}
    return settings.get("date_from"), settings.get("date_to")


def _group_digest(group: str, manifest: dict[str, Any], manifest_dir: Path) -> str:
    """What identifies a group's sample: the data's content hash, else its file hash, else the manifest bytes."""
    output = manifest.get("output") if isinstance(manifest.get("output"), dict) else {}
    digest = output.get("content_sha256") or output.get("sha256")
    if isinstance(digest, str) and digest:
        return digest
    return sha256_file(manifest_dir / f"{group}.manifest.json")


def sample_hash(manifests: dict[str, dict[str, Any]], groups: list[str], manifest_dir: Path) -> str:
    """sha256 over `group:digest` lines, in the run's group order, of every group with a manifest."""
    lines = [f"{g}:{_group_digest(g, manifests[g], manifest_dir)}" for g in groups if g in manifests]
    return sha256_text("\n".join(lines))


def _span(values: list[str]) -> str:
    values = sorted(set(values))
    return values[0] if len(values) == 1 else f"{values[0]} to {values[-1]}"


def source_sentence(manifests: dict[str, dict[str, Any]], groups: list[str], manifest_dir: Path | None) -> str:
    """One short sentence for every table's note, e.g. `Data: arXiv API, papers from 2024-01-01 to
    2024-12-31, fetched 2026-11-30, sample 1a2b3c4d (details: provenance.md).`"""
    if manifest_dir is None:
        return "Data source: not recorded (run without --manifests)."
    if not manifests:
        return f"Data source: not recorded (no manifests in {manifest_dir.name or manifest_dir})."
    ordered = [manifests[g] for g in groups if g in manifests]
    kinds = sorted({_source_kind(m) for m in ordered})
    windows = {_window(m) for m in ordered}
    if len(windows) > 1:
        window = "date windows differ between groups"
    else:
        start, end = next(iter(windows))
        window = (f"papers from {start or 'the start'} to {end or 'the latest'}" if start or end
                  else "no date window")
    fetched = [day for m in ordered if (day := _day(m.get("date")))]
    corpus = all((m.get("source") or {}).get("kind") == "corpus" for m in ordered if isinstance(m.get("source"), dict))
    parts = [f"Data: {' and '.join(kinds)}"] + ([] if corpus else [window])  # a corpus has no date window
    read = all(m.get("source", {}).get("kind") == "snapshot" for m in ordered if isinstance(m.get("source"), dict))
    if fetched:  # a snapshot (the demo's sample too) is read from a file, not fetched
        parts.append(f"{'prepared' if corpus else 'read' if read else 'fetched'} {_span(fetched)}")
    parts.append(f"sample {sample_hash(manifests, groups, manifest_dir)[:SHORT_HASH]}")
    text = ", ".join(parts)
    missing = [g.replace("_", " ") for g in groups if g not in manifests]
    if missing:
        text += f" (no manifest for {', '.join(missing)})"
    return text + " (details: provenance.md)."


def footnote(scores: ScoreSet, manifests: dict[str, dict[str, Any]], manifest_dir: Path | None) -> str:
    return f"{sample_size_note(scores)} {source_sentence(manifests, scores.groups, manifest_dir)}"


# ---------------------------------------------------------------- the full record


def _score_meta(source: Path) -> dict[str, Any] | None:
    meta = source.with_name(source.name.rsplit(".", 1)[0] + ".meta.json")
    try:
        document = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def record(scores: ScoreSet, manifests: dict[str, dict[str, Any]], manifest_dir: Path | None) -> dict[str, Any]:
    """Everything known about where the numbers come from, for provenance.json."""
    groups: dict[str, Any] = {}
    for group in scores.groups:
        manifest = manifests.get(group)
        if manifest is None:
            groups[group] = {"manifest": None}
            continue
        groups[group] = {
            "manifest": str(manifest_dir / f"{group}.manifest.json") if manifest_dir else None,
            **{key: manifest.get(key) for key in ("source", "date", "seed", "papers_per_group", "allow_fewer",
                                                  "settings", "counts", "output", "rmeval_version")},
        }
    models: dict[str, Any] = {}
    for model in scores.models:
        models[model.model] = {
            g.group: {"path": str(g.source), "rows": g.n, "sha256": sha256_file(g.source),
                      "meta": _score_meta(g.source)}
            for g in model.groups
        }
    return {
        "sentence": source_sentence(manifests, scores.groups, manifest_dir),
        "manifests_dir": str(manifest_dir) if manifest_dir is not None else None,
        "sample_sha256": sample_hash(manifests, scores.groups, manifest_dir) if manifests and manifest_dir else None,
        "sample_hash_rule": "sha256 over 'group:digest' lines in group order; digest = the manifest's "
                            "output.content_sha256, else output.sha256, else the manifest file's sha256",
        "groups": groups,
        "scores": models,
    }


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("|", "\\|")


def to_markdown(document: dict[str, Any]) -> str:
    lines = ["# Provenance of the fairness tables", "", document["sentence"], ""]
    lines += [f"Manifests read from: `{document['manifests_dir']}`" if document["manifests_dir"]
              else "Manifests: none read (`rmeval fairness-stats` ran without `--manifests`).", ""]
    if document.get("sample_sha256"):
        lines += [f"Sample sha256: `{document['sample_sha256']}` ({document['sample_hash_rule']}).", ""]
    lines += ["## Data per group", "", "| group | source | fetched | seed | rows | data sha256 |",
              "|:---|:---|:---|---:|---:|:---|"]
    for group, entry in document["groups"].items():
        if entry.get("manifest") is None:
            lines.append(f"| {group} | no manifest |  |  |  |  |")
            continue
        source = entry.get("source")
        if isinstance(source, dict):
            where = source.get("path") or source.get("base_url") or ""
            shown = f"{source.get('kind', '?')}: {where}"
            if source.get("sha256"):
                shown += f" (sha256 {source['sha256']})"
        else:
            shown = str(source)
        output = entry.get("output") if isinstance(entry.get("output"), dict) else {}
        lines.append(f"| {group} | {_cell(shown)} | {_cell(_day(entry.get('date')))} | {_cell(entry.get('seed'))} "
                     f"| {_cell(output.get('rows'))} | {_cell(output.get('sha256'))} |")
    lines += ["", "## Score files", "", "| model | group | rows | revision | device | sha256 |",
              "|:---|:---|---:|:---|:---|:---|"]
    for model, per_group in document["scores"].items():
        for group, entry in per_group.items():
            meta = entry.get("meta") or {}
            lines.append(f"| {model} | {group} | {entry['rows']} | {_cell(meta.get('revision'))} "
                         f"| {_cell(meta.get('device'))} | {entry['sha256']} |")
    return "\n".join(lines) + "\n"


def write(document: dict[str, Any], out_dir: Path) -> list[Path]:
    """provenance.json and provenance.md, atomically."""
    from rmeval.io.atomic import write_json_atomic, write_text_atomic

    json_path = out_dir / f"{PROVENANCE_STEM}.json"
    write_json_atomic(document, json_path)
    md_path = out_dir / f"{PROVENANCE_STEM}.md"
    write_text_atomic(to_markdown(document), md_path)
    return [json_path, md_path]
