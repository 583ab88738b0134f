"""RMB's lock section (key `rmb_data`): the data it read, from the prepare stage's manifest: the source, the
repository and pinned commit with the archive's sha256 (hub) or the local folder, and the sha256 of every file of
both sets; items per set, responses, distinct texts and scenarios. `rmb-prepare --lock` compares the files with it:
a rerun from the lock reads the same bytes or stops."""

from __future__ import annotations

from typing import Any

from rmeval.lock.manifest import PerName, manifest_section
from rmeval.lock.section import SummaryRow

KEY = "rmb_data"
FIELDS = ("source", "repository", "revision", "archive_sha256", "path", "items", "responses", "texts", "scenarios",
          "files")


def summary(data: dict[str, Any]) -> list[SummaryRow]:
    origin = (f"{data.get('repository')}@{str(data.get('revision'))[:12]} (archive sha256 "
              f"{str(data.get('archive_sha256'))[:16]})" if data["source"] == "hub" else str(data.get("path")))
    return [("dataset", "rmb", f"{origin}: {len(data['files'])} files, {data.get('items')} items, "
                               f"{data.get('texts')} distinct texts")]


LOCK_SECTION = manifest_section(KEY, FIELDS, required=("source", "files"), nested={"files": PerName()},
                                locks="the RMB files (sha256 each)", summary=summary)
