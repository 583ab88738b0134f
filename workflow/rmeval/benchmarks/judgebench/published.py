"""JudgeBench's reader of the authors' published per-pair results (its catalogue's `published_reader`).

The files are those `run_judge.py` writes to `outputs/` (ScalerLab/JudgeBench@e2c52c2):
`dataset=judgebench,response_model=<model>,judge_name=reward_model,judge_model=<org>_<name>.jsonl`, one JSON line per
pair (appended as each pair finishes, so not in the data's order): the pair's own fields (`pair_id`, `original_id`,
`source`, `question`, `response_model`, `response_A`, `response_B`, `label`), `judge_name` and `judgments`, one per
order (run_judge.py judge_pairs: (A, B) then (B, A)). A reward model's judgment (utils/judges.py, every reward-model
judge) is `{"judgment": {"judge_model", "scores": [score of the first shown, of the second]}, "decision"}` with
decision `A>B` when the first score is the larger, else `B>A`; a failed judgment is null.
Published for the GPT-4o split only (response_model gpt-4o-2024-05-13), for five reward models; each response was
scored once per order, and the two orders' rewards agree in all 1750 pairs of the five files, so a response's reward
is one number, as rmeval's score contract holds it (`<pair_id>#A`, `<pair_id>#B`); a file whose orders disagree is
refused (its headline could not be recomputed from one reward per response). Equal rewards (3 pairs of
Skywork-Reward-Gemma-2-27B, 1 of Skywork-Reward-Llama-3.1-8B) net 0 under the both-orders rule, as upstream.
An LLM judge's file (verdicts, no rewards) and a file of aggregates only are refused, each named.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rmeval.errors import RmevalError
from rmeval.published.reader import PublishedReader, PublishedScores, RunData, finite_score

FORMAT = "JudgeBench outputs file (run_judge.py)"
PAIR_FIELDS = ("pair_id", "label", "judgments")


def _rewards(judgment: Any, where: str) -> tuple[float, float, str | None, Any]:
    """(first shown's reward, second's, decision, judge_model) of one order's judgment."""
    if judgment is None:
        raise RmevalError(f"{where}: null (the judge failed on it): the file has no per-item scores for it")
    inner = judgment.get("judgment") if isinstance(judgment, dict) else None
    scores = inner.get("scores") if isinstance(inner, dict) else None
    if not isinstance(scores, list) or len(scores) != 2:
        raise RmevalError(f"{where}: no `scores` of the two responses: an LLM judge's verdicts, not a reward model's "
                          "rewards (rmeval reads the judge_name=reward_model files)")
    decision = judgment.get("decision")
    return (finite_score(scores[0], f"{where}: scores[0]"), finite_score(scores[1], f"{where}: scores[1]"),
            decision if isinstance(decision, str) else None, inner.get("judge_model"))


def _pair(record: dict[str, Any], where: str) -> tuple[str, float, float, Any]:
    """(pair_id, reward of A, reward of B, judge_model) of one line, checked against the reward-model rule."""
    judgments = record["judgments"]
    if not isinstance(judgments, list) or len(judgments) != 2:
        raise RmevalError(f"{where}: field 'judgments': expected the two orders' judgments (run_judge.py without "
                          f"--single_game), got {judgments!r:.80}")
    a, b, first, model = _rewards(judgments[0], f"{where}: judgments[0]")
    b2, a2, second, model2 = _rewards(judgments[1], f"{where}: judgments[1]")
    if (a, b) != (a2, b2):
        raise RmevalError(f"{where}: the two orders' rewards differ (A {a!r} / {a2!r}, B {b!r} / {b2!r}); rmeval "
                          "holds one reward per response and could not recompute this file's scores")
    for decision, (x, y), at in ((first, (a, b), 0), (second, (b, a), 1)):
        expected = "A>B" if x > y else "B>A"  # utils/judges.py
        if decision is not None and decision != expected:
            raise RmevalError(f"{where}: judgments[{at}]: decision {decision!r}, but its scores give {expected!r} "
                              "(utils/judges.py: A>B when the first score is larger): not a reward model's judgment")
    if model != model2:
        raise RmevalError(f"{where}: the two judgments name different judge models ({model!r}, {model2!r})")
    return str(record["pair_id"]), a, b, model


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The file's JSON lines (number, record); another layout named in one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RmevalError(f"{path}: not readable ({error})") from None
    try:  # one JSON document: another benchmark's file or aggregates, never run_judge.py's lines
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None
    else:
        if isinstance(document, dict) and "pair_id" not in document:
            numbers = [key for key, value in document.items() if isinstance(value, (int, float))
                       and not isinstance(value, bool)]
            if numbers and not any(isinstance(value, list) for value in document.values()):
                raise RmevalError(f"{path}: holds only aggregates ({len(numbers)} numbers: {', '.join(numbers[:5])}), "
                                  "no per-pair scores; the per-pair rewards are in JudgeBench's outputs/*.jsonl "
                                  "(run_judge.py)")
            raise RmevalError(f"{path}: not a {FORMAT}: a JSON object with keys {', '.join(sorted(document)[:8])} "
                              "(another benchmark's results?)")
        if isinstance(document, list):
            keys = sorted({key for record in document if isinstance(record, dict) for key in record})
            raise RmevalError(f"{path}: not a {FORMAT}: a JSON list (of records with {', '.join(keys[:8]) or 'none'}), "
                              "not one pair per line (another benchmark's results?)")
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise RmevalError(f"{path}: line {number}: not JSON ({error.msg}); not a {FORMAT}") from None
        if not isinstance(record, dict):
            raise RmevalError(f"{path}: line {number}: not a JSON object; not a {FORMAT}")
        records.append((number, record))
    if not records:
        raise RmevalError(f"{path}: no rows")
    return records


def read(path: Path) -> PublishedScores:
    path = Path(path)
    records = _records(path)
    number, first = records[0]
    lacking = [key for key in PAIR_FIELDS if key not in first]
    if lacking:
        what = ("JudgeBench's pairs without any judge's judgments (a data file, not an outputs file)"
                if {"pair_id", "label"} <= set(first) else
                f"expected fields {', '.join(PAIR_FIELDS)}; found {', '.join(sorted(first)[:8])} (another "
                "benchmark's results?)")
        raise RmevalError(f"{path}: line {number}: not a {FORMAT}: {what}")
    rewards: dict[str, float] = {}
    items: dict[str, tuple[str, ...]] = {}
    models: set[Any] = set()
    response_models: set[str] = set()
    for number, record in records:
        pair_id = record.get("pair_id")
        where = f"{path}: line {number}" + (f" (pair_id {pair_id})" if isinstance(pair_id, str) else "")
        missing = [key for key in PAIR_FIELDS if key not in record]
        if missing:
            raise RmevalError(f"{where}: missing field(s) {missing}")
        if record.get("judge_name") not in (None, "reward_model"):
            raise RmevalError(f"{where}: judge_name {record['judge_name']!r}: an LLM judge's verdicts, no rewards; "
                              "rmeval reads the reward models' files (judge_name=reward_model)")
        item, reward_a, reward_b, model = _pair(record, where)
        if item in items:
            raise RmevalError(f"{where}: pair_id is there twice")
        items[item] = (f"{item}#A", f"{item}#B")
        rewards[f"{item}#A"], rewards[f"{item}#B"] = reward_a, reward_b
        models.add(model)
        if isinstance(record.get("response_model"), str):
            response_models.add(record["response_model"])
    if len(models) > 1:
        raise RmevalError(f"{path}: judgments of several judge models: {sorted(map(str, models))}")
    model = next(iter(models))
    return PublishedScores(rewards, items, model if isinstance(model, str) else None,
                           {"response_model": ", ".join(sorted(response_models))} if response_models else {})


def item_of(row_id: str) -> str:
    """`<pair_id>#A` -> `<pair_id>` (loading.py's ids of the per-response table)."""
    return row_id.rsplit("#", 1)[0]


def run_data(section: Mapping[str, Any], locate: Callable[[str], str]) -> RunData:
    """This run's pairs of every split it scores, where they are local files (else the Hub revision, in words)."""
    from rmeval.benchmarks.judgebench.loading import item_rows, local_file, read_pairs, split_names
    from rmeval.benchmarks.judgebench.official import HF_ID

    splits = split_names(list(section.get("splits") or ["gpt"]), "config: judgebench.splits")
    names = ", ".join(split.name for split in splits)
    if section.get("source") != "local" or not section.get("path"):
        return RunData(f"{HF_ID}@{section.get('revision') or 'main'} (splits {names})")
    folder = locate(str(section["path"]))
    words = f"local folder {folder} (splits {names})"
    row_ids: list[str] = []
    for split in splits:
        pairs, problems = read_pairs(local_file(folder, split))
        if problems:
            return RunData(words)  # the data's own check names them
        row_ids += [row["id"] for row in item_rows(pairs)]
    return RunData(words, tuple(row_ids))


def input_words(table: Path) -> str:
    """The data a prepared table (`data/<split>.parquet`) came from, from the manifest beside its folder."""
    manifest = Path(table).parent.parent / "manifest.json"
    split = Path(table).stem
    if not manifest.is_file():
        return f"the prepared table {table}"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    about = (record.get("splits") or {}).get(split) or {}
    sha = str(about.get("sha256") or "")[:16]
    if record.get("source") == "hub":
        revision = about.get("resolved_revision") or record.get("revision") or "main"
        return f"{record.get('dataset')}@{revision} split {split} (sha256 {sha})"
    return f"local file {about.get('file')} (split {split}, sha256 {sha})"


READER = PublishedReader(benchmark="judgebench", fmt=FORMAT, id_name="JudgeBench `pair_id`", read=read,
                         item_of=item_of, run_data=run_data, input_words=input_words)
