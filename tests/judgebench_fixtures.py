"""Small JudgeBench splits in the official layout (ScalerLab/JudgeBench `data/dataset=judgebench,response_model=
<model>.jsonl`: one JSON object per line with pair_id, original_id, source, question, response_model, response_A,
response_B, label), written from our own text. The `.test/judgebench` scenario's files are these
(`python tests/judgebench_fixtures.py .test/judgebench/data` rewrites them; a test checks they match).

Each split covers the four categories' source prefixes (two MMLU-Pro subjects), both labels, a pair whose two
responses are the same text (equal rewards for every model: never correct), and pairs where the longer response
loses, so that the length baseline's numbers are not the trivial ones.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

RESPONSE_MODELS = {"gpt": "gpt-4o-2024-05-13", "claude": "claude-3-5-sonnet-20240620"}
SOURCES = ("mmlu-pro-law", "mmlu-pro-math", "livebench-reasoning", "livebench-math", "livecodebench")
TOPICS = ("a contract dispute", "the sum of two primes", "who sits left of Ana", "the area of a triangle",
          "reversing a linked list", "a tort of negligence", "the derivative of x^3", "a logic grid of five houses",
          "a bounded integral", "parsing a CSV line", "an easement by necessity", "the gcd of 84 and 36")


def pair_rows(split: str, count: int) -> list[dict]:
    rows = []
    for index in range(count):
        source = SOURCES[index % len(SOURCES)]
        topic = TOPICS[index % len(TOPICS)]
        question = f"Question {index} ({split}): reason step by step about {topic} and give one final answer."
        short = f"The answer about {topic} is {index % 4}."
        long = (f"Let us work through {topic} carefully. First we restate the facts; then we check each option in "
                f"turn and discard the ones that fail. " * (1 + index % 3)) + f"So the answer is {(index + 1) % 4}."
        label = "A>B" if index % 2 == 0 else "B>A"
        # The winner is the short response on every third pair: length alone gets those wrong.
        winner, loser = (short, long) if index % 3 == 0 else (long, short)
        response_a, response_b = (winner, loser) if label == "A>B" else (loser, winner)
        if index == 5:  # the same text twice: equal rewards for every model
            response_a = response_b = long
        rows.append({"pair_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"rmeval-judgebench/{split}/{index}")),
                     "original_id": 1000 + index, "source": source, "question": question,
                     "response_model": RESPONSE_MODELS[split], "response_A": response_a,
                     "response_B": response_b, "label": label})
    return rows


SIZES = {"gpt": 12, "claude": 8}


def file_name(split: str) -> str:
    return f"dataset=judgebench,response_model={RESPONSE_MODELS[split]}.jsonl"


def write_folder(folder: Path, splits: tuple[str, ...] = ("gpt", "claude"), sizes: dict[str, int] = SIZES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split in splits:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in pair_rows(split, sizes[split]))
        (folder / file_name(split)).write_text(text, encoding="utf-8")
    return folder


if __name__ == "__main__":
    write_folder(Path(sys.argv[1]))
