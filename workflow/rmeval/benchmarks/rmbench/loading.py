"""RM-Bench's official JSON (a list of prompts, `total_dataset.json`) -> the scoring engine's table: one row per
response, six per prompt.

Sources: a local copy of the official file, or the Hub dataset's file at a revision (`hf_hub_download`: the very
bytes, so that the lock's sha256 is the file's). Every problem of the file is named, one line each with the file,
the item and the field (`problems`), before anything is written; `prepare` refuses a file with any.

Score ids: `<domain>/<id>#chosen<i>` and `<domain>/<id>#rejected<j>`, with the prompt's own `domain` (ids repeat
across domains) and i, j the style's index (0 concise, 1 detailed plain, 2 detailed markdown).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rmeval.benchmarks.rmbench.official import DOMAINS, FIELDS, HF_FILE, HF_ID, STYLES, domain_of
from rmeval.errors import RmevalError

if TYPE_CHECKING:
    import pandas as pd

PREPARED_COLUMNS = ("id", "prompt", "response", "item", "domain", "subdomain", "subset", "is_chosen", "style")
MAX_LINES = 20  # problems named one by one; the rest are counted


@dataclass(frozen=True)
class Source:
    """Where the file comes from: `hub` (the dataset's file at `revision`) or `local` (`path`)."""

    kind: str
    path: str | None = None
    revision: str | None = None

    @property
    def where(self) -> str:
        return str(self.path) if self.kind == "local" else f"{HF_ID}@{self.revision or 'main'}:{HF_FILE}"


def local_file(source: Source) -> Path:
    """The file to read: the local path, or the Hub file downloaded (or found in the cache) at the revision."""
    if source.kind == "local":
        path = Path(str(source.path))
        if not path.is_file():
            raise RmevalError(f"{path}: file not found")
        return path
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(HF_ID, HF_FILE, repo_type="dataset", revision=source.revision))


def read_units(path: Path) -> list[Any]:
    """The file's JSON array of prompts, as written."""
    try:
        with path.open(encoding="utf-8") as handle:
            units = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise RmevalError(f"{path}: not readable as JSON ({error})") from error
    if not isinstance(units, list):
        raise RmevalError(f"{path}: expected a JSON array of prompts (the official layout), got a "
                          f"{type(units).__name__}")
    return units


def _label(unit: Any, index: int) -> str:
    if isinstance(unit, dict) and "id" in unit:
        return f"item {index} (domain={unit.get('domain')!r}, id={unit['id']!r})"
    return f"item {index}"


def _responses(unit: dict[str, Any], field: str, at: str) -> list[str]:
    value = unit.get(field)
    if not isinstance(value, list):
        return [f"{at}: field {field!r}: expected a list of {len(STYLES)} responses ({', '.join(STYLES)}), got "
                f"{type(value).__name__}"]
    if len(value) != len(STYLES):
        return [f"{at}: field {field!r}: {len(value)} styles instead of {len(STYLES)} ({', '.join(STYLES)})"]
    return [f"{at}: field {field!r}[{k}] ({STYLES[k]}): expected a non-empty string, got {text!r:.80}"
            for k, text in enumerate(value) if not (isinstance(text, str) and text.strip())]


def problems(units: list[Any], where: str) -> list[str]:
    """Every problem of the file, one line each (file, item, field); [] when it is fine."""
    if not units:
        return [f"{where}: no prompts (an empty array)"]
    lines: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    domains: set[str] = set()
    for index, unit in enumerate(units):
        at = f"{where}: {_label(unit, index)}"
        if not isinstance(unit, dict):
            lines.append(f"{at}: expected an object, got {type(unit).__name__}")
            continue
        missing = [field for field in FIELDS if field not in unit]
        if missing:
            lines.append(f"{at}: missing field(s) {missing}"
                         + (" (the per-domain files lack `domain`; use total_dataset.json)" if missing == ["domain"]
                            else ""))
        raw_id = unit.get("id")
        if "id" in unit and (isinstance(raw_id, bool) or not isinstance(raw_id, (int, str)) or str(raw_id) == ""):
            lines.append(f"{at}: field 'id': expected an integer or a non-empty string, got {raw_id!r}")
        subdomain = unit.get("domain")
        if "domain" in unit:
            if not isinstance(subdomain, str) or domain_of(subdomain) is None:
                lines.append(f"{at}: field 'domain': {subdomain!r} is none of {', '.join(DOMAINS)} (nor starts with "
                             "one)")
            else:
                domains.add(domain_of(subdomain) or "")
                key = (subdomain, str(raw_id))
                if key in seen:
                    lines.append(f"{at}: field 'id': duplicate of item {seen[key]} (same domain and id)")
                seen.setdefault(key, index)
        if "prompt" in unit and not (isinstance(unit["prompt"], str) and unit["prompt"].strip()):
            lines.append(f"{at}: field 'prompt': expected a non-empty string, got {unit['prompt']!r:.80}")
        for field in ("chosen", "rejected"):
            if field in unit:
                lines.extend(_responses(unit, field, at))
    absent = [domain for domain in DOMAINS if domain not in domains]
    if absent and len(lines) == 0:
        lines.append(f"{where}: no prompt of domain(s) {absent}: the overall scores average all four "
                     f"({', '.join(DOMAINS)})")
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"{where}: ... and {len(lines) - MAX_LINES} more problem(s)"]
    return lines


def prepare(units: list[Any], where: str) -> pd.DataFrame:
    """One row per response (PREPARED_COLUMNS), prompts in file order, then chosen 0-2, rejected 0-2."""
    import pandas as pd

    found = problems(units, where)
    if found:
        raise RmevalError("\n".join(found))
    out: list[dict[str, Any]] = []
    for unit in units:
        item = f"{unit['domain']}/{unit['id']}"
        for field, is_chosen in (("chosen", True), ("rejected", False)):
            for style, response in enumerate(unit[field]):
                out.append({"id": f"{item}#{field}{style}", "prompt": unit["prompt"], "response": response,
                            "item": item, "domain": domain_of(unit["domain"]), "subdomain": unit["domain"],
                            "subset": str(unit.get("subset") or ""), "is_chosen": is_chosen, "style": style})
    return pd.DataFrame(out, columns=list(PREPARED_COLUMNS))
