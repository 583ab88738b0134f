"""Preflight's check of a local corpus table (rmeval.preflight `Check`): the very checks `rmeval corpus-prepare`
makes (columns, labels, empty cells, duplicate ids, empty groups, pairs, too few rows), run before the first job, so
that a bad corpus stops the run before Snakemake removes the outputs of an earlier good run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.preflight import Problem

FIX = "fix the corpus file or the `corpus:` section (config/README.md, \"corpus\")"


def corpus_problem(corpus: Mapping[str, Any], groups: Mapping[str, list[str]], rules: frozenset[str]) -> Problem | None:
    """What `rmeval corpus-prepare` would stop on for this table, if anything (None: fine, or no file: its
    FileNeed says so)."""
    from rmeval.benchmarks.fairness.corpus.prepare import prepare
    from rmeval.benchmarks.fairness.corpus.source import load

    if corpus["source"] != "table" or not Path(corpus["path"]).is_file():
        return None
    try:
        loaded = load(corpus)
        prepare(loaded.frame, groups, corpus, loaded.where)
    except RmevalError as error:
        return Problem("corpus", str(error), FIX, rules)
    return None
