"""The fairness benchmark's scoring task: a `results/data/{group}.parquet` table (id, title, abstract, ...) -> pairs.

The prompt is Song et al. (2025)'s, "Write an abstract for a paper with title <Title>", and the response is the
paper's abstract (its catalogue registers this as the task `fairness` of `rmeval score`). A grouped corpus
(`corpus:`, rmeval.benchmarks.fairness.corpus) writes its own `prompt` and `response` columns, used as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rmeval.tasks import Pairs, id_and_texts

if TYPE_CHECKING:
    import pandas as pd

FAIRNESS_PROMPT = "Write an abstract for a paper with title {title}"


def fairness_pairs(table: pd.DataFrame, where: str) -> Pairs:
    if "prompt" in table.columns and "response" in table.columns and "abstract" not in table.columns:
        ids, prompts, responses = id_and_texts(table, "prompt", "response", where)
        return Pairs(ids=ids, prompts=prompts, responses=responses, steps=None)
    ids, titles, abstracts = id_and_texts(table, "title", "abstract", where)
    prompts = [FAIRNESS_PROMPT.format(title=" ".join(title.split())) for title in titles]
    return Pairs(ids=ids, prompts=prompts, responses=[a.strip() for a in abstracts], steps=None)
