"""Write the run's config and run the repository's Snakefile with it: the same workflow, started the way a user would
start it by hand (`snakemake --configfile results/run_config.yaml --cores N [--workflow-profile ...] [-n]`)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN_CONFIG = "results/run_config.yaml"
# A dry run changes nothing in results/: its config goes beside Snakemake's own records.
DRY_RUN_CONFIG = ".snakemake/rmeval/run_config.dry-run.yaml"
# A refused run (a check stopped it before any job) keeps the config it would have run there too.
REFUSED_CONFIG = ".snakemake/rmeval/run_config.refused.yaml"
PROFILES = "profiles"
DEFAULT_PROFILE = "default"  # what plain `snakemake` reads by itself


def profiles(repository: Path) -> list[str]:
    """The workflow profiles `--profile` may name (profiles/<name>/, less the default one Snakemake reads anyway)."""
    return sorted(path.name for path in (repository / PROFILES).iterdir()
                  if path.is_dir() and path.name != DEFAULT_PROFILE)


@dataclass(frozen=True)
class Launch:
    """How Snakemake is started: from `workdir`, on the repository's Snakefile."""

    repository: Path
    workdir: Path
    cores: str | None
    profile: str | None
    dry_run: bool

    @property
    def configfile(self) -> str:
        return DRY_RUN_CONFIG if self.dry_run else RUN_CONFIG

    def _in_repository(self) -> bool:
        return self.workdir.resolve() == self.repository.resolve()

    def base(self) -> list[str]:
        """`snakemake` arguments naming the workflow and the config (what the report command takes too)."""
        snakefile = [] if self._in_repository() else ["-s", str(self.repository / "Snakefile")]
        return [*snakefile, "--configfile", self.configfile]

    def arguments(self) -> list[str]:
        args = self.base()
        if self.cores is not None:
            args += ["--cores", self.cores]
        elif self.profile is None:
            args += ["--cores", "all"]
        if self.profile is not None:
            folder = Path(PROFILES) / self.profile
            args += ["--workflow-profile", str(folder if self._in_repository() else self.repository / folder)]
        return [*args, "-n"] if self.dry_run else args

    def command(self, args: list[str]) -> str:
        return shlex.join(["snakemake", *args])

    def run(self) -> int:
        """Snakemake in this process's interpreter, its output on this console; its exit status. Ctrl-C reaches
        Snakemake too (one process group): it stops its jobs, and this waits for it."""
        process = subprocess.Popen([sys.executable, "-m", "snakemake", *self.arguments()], cwd=self.workdir)
        try:
            return process.wait()
        except KeyboardInterrupt:
            return process.wait()


def config_text(config: dict[str, Any], launch: Launch, argv: list[str]) -> str:
    """The config as YAML, its first lines saying how to rerun it with plain Snakemake."""
    import yaml

    rerun = launch.command([arg for arg in launch.arguments() if arg != "-n"])
    header = [
        "# Written by `rmeval run`: the config of the run in results/, checked against the schema. Rerun it (Snakemake",
        "# redoes nothing that is up to date), or edit it and run it, with plain Snakemake from this folder:",
        f"#   {rerun}",
        f"# Written by: {shlex.join(['rmeval', 'run', *argv])}",
        "# Every key: config/README.md. `rmeval run` only writes this file: the rules read nothing else from it.",
    ]
    return "\n".join(header) + "\n" + yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)


def write_config(text: str, launch: Launch, where: str | None = None) -> tuple[Path, bool]:
    """Write the config where the run reads it (or at `where`); an unchanged config keeps its file as it was. The
    path, and whether it was written."""
    from rmeval.io.atomic import write_text_atomic

    path = launch.workdir / (where or launch.configfile)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(text, path)
    return path, True
