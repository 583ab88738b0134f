"""`rmeval rmb-prepare`: the official RMB_dataset folder (a local copy, or the authors' repository at a pinned
commit) -> the texts to score, the items, and a manifest (every file's sha256) that the lock records.

With `--lock`, the files must be the bytes the lock recorded: any other (changed, added, missing) stops the run,
naming the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rmeval import cli_settings
from rmeval.benchmarks.rmb.layout import ARCHIVE_URL, FOLDER, KINDS, REPOSITORY
from rmeval.config_check import schema_default
from rmeval.errors import RmevalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmeval rmb-prepare", description=__doc__)
    parser.add_argument("--source", choices=["hub", "local"], default=schema_default("rmb.source"))
    parser.add_argument("--path", help="the official RMB_dataset folder (source local)")
    parser.add_argument("--revision", default=schema_default("rmb.revision"),
                        help="commit of the authors' repository (source hub)")
    parser.add_argument("--download", help="folder the repository's RMB_dataset is unpacked into (source hub)")
    parser.add_argument("--lock", help="a results/lock.yaml to follow: the files must be the bytes it recorded")
    parser.add_argument("--out", required=True, help="the texts table (.parquet); items and manifest go beside it")
    cli_settings.add_settings_argument(parser)
    return parser


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every JSON file of both sets, by its path under the folder."""
    from rmeval.io.hashing import sha256_file

    return {path.relative_to(root).as_posix(): sha256_file(path)
            for kind in KINDS.values() for path in sorted((root / kind.folder).rglob("*.json"))}


def download(revision: str, folder: Path, url: str | None = None) -> tuple[Path, str]:
    """The repository's archive at `revision` (GitHub's tarball of that commit), its RMB_dataset folder unpacked
    into `folder`; returns (the RMB_dataset folder, the archive's sha256). Only RMB_dataset/*.json is unpacked."""
    import hashlib
    import io
    import shutil
    import tarfile
    import urllib.request

    source = url or ARCHIVE_URL.format(repository=REPOSITORY, revision=revision)
    try:
        with urllib.request.urlopen(source, timeout=120) as response:  # noqa: S310 - a pinned https URL
            payload = response.read()
    except OSError as error:
        raise RmevalError(f"rmb.source hub: cannot download {source} ({error}); offline, use `rmb.source: local` "
                          f"with `rmb.path` (config/README.md)") from None
    digest = hashlib.sha256(payload).hexdigest()
    target = folder / FOLDER
    if target.exists():
        shutil.rmtree(target)
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as archive:
        for member in archive.getmembers():
            parts = Path(member.name).parts
            if len(parts) < 3 or parts[1] != FOLDER or not member.isfile() or not member.name.endswith(".json"):
                continue
            if ".." in parts:
                raise RmevalError(f"{source}: unsafe path {member.name!r} in the archive")
            path = folder.joinpath(*parts[1:])
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = archive.extractfile(member)
            if handle is not None:
                path.write_bytes(handle.read())
    if not target.is_dir():
        raise RmevalError(f"{source}: the archive holds no {FOLDER}/ folder")
    return target, digest


def locked_files(lock: str) -> dict[str, str] | None:
    """The file hashes a lock recorded for RMB (its `rmb_data.files`), or None when it has no RMB section."""
    from rmeval.benchmarks.rmb.lock import KEY
    from rmeval.lock.manifest import locked_record

    files = (locked_record(lock, KEY) or {}).get("files")
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else None


def check_against_lock(files: dict[str, str], locked: dict[str, str], lock: str) -> None:
    lines = [f"{name}: sha256 {files[name][:16]} is not the locked {locked[name][:16]}"
             for name in sorted(files) if name in locked and files[name] != locked[name]]
    lines += [f"{name}: not in the lock" for name in sorted(set(files) - set(locked))]
    lines += [f"{name}: locked but missing" for name in sorted(set(locked) - set(files))]
    if lines:
        raise RmevalError(f"{lock}: the RMB files are not the locked bytes; the run stops:\n  " + "\n  ".join(lines))


def main(argv: list[str]) -> int:
    from rmeval.benchmarks.rmb.loading import read_checked, tables
    from rmeval.io.atomic import write_json_atomic, write_parquet_atomic

    args = cli_settings.parse_args(build_parser(), argv)
    out = Path(args.out)
    record: dict[str, Any] = {"source": args.source}
    if args.source == "local":
        if not args.path:
            raise RmevalError("rmeval rmb-prepare: rmb.source is local but no path is given")
        root = Path(args.path)
        record["path"] = str(args.path)
    else:
        root, archive_sha256 = download(args.revision, Path(args.download or out.parent / "download"))
        record.update({"repository": REPOSITORY, "revision": args.revision, "archive_sha256": archive_sha256})
    items = read_checked(root)
    files = file_hashes(root)
    if args.lock and (locked := locked_files(args.lock)) is not None:
        check_against_lock(files, locked, args.lock)
    texts, item_rows = tables(items)
    write_parquet_atomic(texts, out)
    write_parquet_atomic(item_rows, out.with_name("items.parquet"))
    by_kind = item_rows.drop_duplicates(["kind", "item_id"])["kind"].value_counts()
    record.update({
        "items": {kind: int(by_kind.get(kind, 0)) for kind in KINDS},
        "responses": len(item_rows), "texts": len(texts),
        "scenarios": int(item_rows["scenario"].nunique()), "files": files,
    })
    write_json_atomic(record, out.with_name("manifest.json"))
    print(f"rmb-prepare: {record['items']} items, {len(item_rows)} responses, {len(texts)} distinct texts, "
          f"{record['scenarios']} scenarios from {root}")
    return 0

