"""The tests' Snakemake runs (tests/snakemake_forkserver.py) behave as `python -m snakemake` started afresh: the
working directory, environment, exit status and output are the run's own, one run leaves nothing to the next, and a
run past its timeout is killed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import run_snakemake_process

SNAKEFILE = """\
import os

MARK = os.environ.get("FORKSERVER_MARK", "unset")
LEAK = os.environ.get("FORKSERVER_LEAK", "clean")
os.environ["FORKSERVER_LEAK"] = "set-by-an-earlier-run"  # must not reach the next run


rule all:
    input:
        "out/mark.txt",


rule mark:
    output:
        "out/mark.txt",
    log:
        "logs/mark.log",
    shell:
        "(echo {MARK} $FORKSERVER_MARK {LEAK} > {output}) 2> {log}"
"""


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    return tmp_path


def test_a_run_has_its_own_directory_environment_and_output(workflow: Path) -> None:
    for mark in ("first", "second"):
        (workflow / "out" / "mark.txt").unlink(missing_ok=True)
        env = {key: value for key, value in os.environ.items() if not key.startswith("FORKSERVER_")}
        result = run_snakemake_process(["--cores", "1"], cwd=workflow, env={**env, "FORKSERVER_MARK": mark})
        assert result.returncode == 0, result.stderr
        assert (workflow / "out" / "mark.txt").read_text().split() == [mark, mark, "clean"]
        assert "rule mark:" in result.stderr and "1 of 2 steps" in result.stderr
        assert result.args[:3] == [sys.executable, "-m", "snakemake"]


def test_exit_status_and_messages_are_those_of_a_fresh_process(workflow: Path) -> None:
    (workflow / "Snakefile").write_text("rule all:\n    input: undefined_name\n")
    forked = run_snakemake_process(["--cores", "1", "-n"], cwd=workflow)
    fresh = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "-n"], cwd=workflow,
                           capture_output=True, text=True, timeout=120)
    assert forked.returncode == fresh.returncode == 1
    assert "name 'undefined_name' is not defined" in forked.stdout + forked.stderr
    assert (forked.stdout, forked.stderr) == (fresh.stdout, fresh.stderr)


def test_a_run_past_its_timeout_is_killed(workflow: Path) -> None:
    (workflow / "Snakefile").write_text('rule all:\n    output: "never"\n    shell: "sleep 60"\n')
    with pytest.raises(subprocess.TimeoutExpired):
        run_snakemake_process(["--cores", "1"], cwd=workflow, timeout=5)
    # The server is free again: the next run starts at once.
    assert run_snakemake_process(["--version"], cwd=workflow, timeout=60).returncode == 0
