"""A published model's registry entry (adapter `published`): where its file is and how it is pinned.

Sources (the entry's `options.source`):
- `github`: `repo` (owner/name) at `commit` (40 hex), `path` in the repository; fetched once from
  raw.githubusercontent.com (or the mirror $RMEVAL_GITHUB_RAW) into the cache ($RMEVAL_PUBLISHED_CACHE, else
  ~/.cache/rmeval/published).
- `hub`: a Hugging Face dataset `repo` at `revision`, `path` in it (`hf_hub_download`, the HF cache; the commit it
  resolved to is recorded).
- `local`: `path` is a file on this machine in the authors' format (offline, a copy of the same file serves).
- `run`: `path` is an earlier rmeval run's results/ folder; `model` is the model's name there (default: the entry's).
The file's sha256 goes into the score sidecar and the lock (`published_sha256`); with `options.sha256` set, a file
that differs is refused.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError

CACHE_ENV = "RMEVAL_PUBLISHED_CACHE"
GITHUB_RAW_ENV = "RMEVAL_GITHUB_RAW"  # a mirror of raw.githubusercontent.com on this machine's network (and tests')
GITHUB_RAW = "https://raw.githubusercontent.com"
REVISION_PREFIX = "published:"  # a published model's revision in its sidecars and the lock
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def cache_dir(env: Any = os.environ) -> Path:
    return Path(env.get(CACHE_ENV) or Path.home() / ".cache" / "rmeval" / "published").expanduser()


@dataclass(frozen=True)
class PublishedEntry:
    name: str
    source: str
    path: str
    benchmark: str | None
    model: str | None
    repo: str | None = None
    commit: str | None = None
    revision: str | None = None
    sha256: str | None = None
    leaderboard: float | None = None  # the headline of the authors' leaderboard page (percent)
    leaderboard_source: str | None = None

    @classmethod
    def from_spec(cls, spec: Any) -> PublishedEntry:
        """The entry of a resolved registry entry (rmeval.registry.ModelSpec); every problem in one error."""
        from rmeval.models.catalogue import ADAPTERS, PUBLISHED

        options = dict(spec.options)
        where = f"model {spec.name!r}"
        problems = ADAPTERS[PUBLISHED].option_problems(options)
        entry = cls(name=spec.name, source=str(options.get("source")), path=str(options.get("path")),
                    benchmark=options.get("benchmark"),
                    model=options.get("model") or (spec.name if options.get("source") == "run" else None),
                    repo=options.get("repo"), commit=options.get("commit"), revision=options.get("revision"),
                    sha256=options.get("sha256"), leaderboard=options.get("leaderboard"),
                    leaderboard_source=options.get("leaderboard_source"))
        if not problems:
            problems = entry.problems()
        if problems:
            raise RmevalError(f"{where}: " + "; ".join(problems))
        return entry

    def problems(self) -> list[str]:
        lines = []
        needs = {"github": ("repo", "commit"), "hub": ("repo", "revision"), "local": (), "run": ()}[self.source]
        lines += [f"options.{key}: missing; source {self.source} needs it" for key in needs if not getattr(self, key)]
        refused = {"github": ("revision",), "hub": ("commit",), "local": ("repo", "commit", "revision"),
                   "run": ("repo", "commit", "revision", "benchmark", "sha256", "leaderboard")}[self.source]
        lines += [f"options.{key}: not with source {self.source}; remove it" for key in refused if getattr(self, key)]
        if self.source != "run" and not self.benchmark:
            lines.append("options.benchmark: missing; name the benchmark the file holds results of")
        if self.source != "run" and not self.model:
            lines.append("options.model: missing; the published model's name, as the file names it")
        if self.commit and not _COMMIT.fullmatch(self.commit):
            lines.append(f"options.commit: {self.commit!r} is not a 40-hex commit (a branch or tag is no pin)")
        if (self.leaderboard is None) != (self.leaderboard_source is None):
            lines.append("options.leaderboard and options.leaderboard_source: give both (the value, and where it was "
                         "read) or neither")
        if self.sha256 and not _SHA256.fullmatch(self.sha256):
            lines.append(f"options.sha256: {self.sha256!r} is not 64 hex digits")
        return lines

    @property
    def origin(self) -> str:
        """Where the file is, pinned, in words: `github:owner/name@<commit>:path`, `hub:owner/name@rev:path`,
        `local:path`, `run:folder`."""
        if self.source == "github":
            return f"github:{self.repo}@{self.commit}:{self.path}"
        if self.source == "hub":
            return f"hub:{self.repo}@{self.revision}:{self.path}"
        return f"{self.source}:{self.path}"

    def cached(self) -> Path | None:
        """The file on this machine, or None while a github / hub file is not downloaded yet."""
        if self.source in ("local", "run"):  # as the config's paths: the run directory's, else the repository's
            from rmeval.io.paths import config_path
            from rmeval.run_outputs.context import REPOSITORY

            return Path(config_path(str(Path(self.path).expanduser()), REPOSITORY, Path.cwd()))
        if self.source == "github":
            target = self._github_target()
            return target if target.is_file() else None
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(str(self.repo), self.path, revision=self.revision, repo_type="dataset")
        return Path(found) if isinstance(found, str) else None

    def _github_target(self) -> Path:
        return cache_dir() / "github" / str(self.repo) / str(self.commit) / self.path

    def fetch(self) -> Path:
        """The file, downloaded once at its pin when it is not on this machine (the download stage calls it)."""
        found = self.cached()
        if found is not None:
            if not found.exists():
                raise RmevalError(f"model {self.name!r}: options.path: {found} not found")
            return found
        from rmeval.hub import hub_offline

        if hub_offline():
            raise RmevalError(f"model {self.name!r}: {self.origin} is not downloaded yet and HF_HUB_OFFLINE is set; "
                              "download it where there is network, or use `source: local` with a copy of the file")
        if self.source == "hub":
            from huggingface_hub import hf_hub_download

            return Path(hf_hub_download(str(self.repo), self.path, revision=self.revision, repo_type="dataset"))
        import urllib.request

        from rmeval.io.atomic import replacing

        url = f"{os.environ.get(GITHUB_RAW_ENV) or GITHUB_RAW}/{self.repo}/{self.commit}/{self.path}"
        target = self._github_target()
        target.parent.mkdir(parents=True, exist_ok=True)
        print(f"rmeval: {self.name}: downloading {url}", file=sys.stderr)
        try:
            with urllib.request.urlopen(url, timeout=120) as response, replacing(target) as partial:
                Path(partial).write_bytes(response.read())
        except OSError as error:
            raise RmevalError(f"model {self.name!r}: {url}: {error}") from error
        return target

    def resolved(self, file: Path) -> str:
        """What pins the file that was read: the commit (github), the commit the hub revision resolved to (the HF
        cache's snapshots/<commit>/ folder), or nothing more than the sha256 (local, run)."""
        if self.source == "github":
            return str(self.commit)
        if self.source == "hub":
            parts = Path(file).parts
            return parts[parts.index("snapshots") + 1] if "snapshots" in parts else str(self.revision)
        return ""

    def check_file(self, file: Path, named_model: str | None) -> str:
        """The file read is this entry's: the model it names (None: it names none) and its sha256 against the pin;
        returns the sha256, else an RmevalError naming what differs."""
        from rmeval.io.hashing import sha256_file

        if named_model is not None and self.source != "run" and named_model != self.model:
            raise RmevalError(f"model {self.name!r}: {file} holds the results of {named_model!r}, but options.model "
                              f"is {self.model!r}")
        digest = sha256_file(file)
        if self.sha256 and digest != self.sha256:
            raise RmevalError(f"model {self.name!r}: {file} has sha256 {digest}, but options.sha256 is "
                              f"{self.sha256}: not the pinned file")
        return digest
