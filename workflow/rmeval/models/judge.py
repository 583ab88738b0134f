"""`judge`: an LLM judge behind any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, a hosted API).

Two modes, as in RewardMATH (Kim et al. 2024; kimsh0507/RewardMATH_official, `src/inference_reward.py`):
- `direct`: one request per solution; the reward is the judge's 1-10 rating `[[N]]`;
- `pairwise`: for every rejected solution of a problem, one request comparing it with the problem's chosen
  solution, which is shown at its recorded `chosen_position` (A or B; a column of the input table) unless
  `positions: seeded`; the verdict is `[[A]]` / `[[B]]`. The chosen row itself gets reward 0 and no request;
  a rejected row gets -1 when the chosen solution won and +1 when it lost or no verdict was found, so that
  accuracy / MRR over (0, rejected...) equal the official pairwise evaluation (a null verdict is a loss).

Messages: the prompt entry's `prompt` as the system message and its `format.user`, filled in, as the user
message (the official script does the same for API judges; `format.assistant` is not sent, as there).
Solutions given as steps are shown as a numbered list "1. step", as the official `numbered_list_prompt`.

Parsing (`parse_rating`, `parse_verdict`) accepts `[[8]]`, `[[8/10]]`, `Rating: 8`, `Score: 8/10`,
`[RESULT] 4`, `[[A]]`, `[[Assistant B]]`, `Judgement: A`, `Final verdict: **B**`, ...; the last match wins.
An unparsable reply is a null: kept in the output (`rating` / `verdict` null, the reply text kept), counted in the
meta, and scored as the official script scores it: a null rating as the lowest rating (`null_rating`, default the
bottom of `rating_range`), a null verdict as a loss. Unlike the official parser (first A or B after
"Judgement:"), a letter inside a word ("Assistant") is never taken for a verdict.

Options: `mode` (direct | pairwise, required), `base_url`, `model`, `api_key_env` (default OPENAI_API_KEY; a
local server needs none: the variable may be unset), `prompt_file` + `prompt_key` (default: rmeval's own prompts),
`temperature` (0), `max_tokens` (2048, as the official script), `n` (1: samples per request; the ratings are
averaged, the verdicts decided by majority, a tie being null), `seed`, `positions` (recorded | seeded),
`both_orders` (false: also judge every pair with A and B swapped and report the position agreement),
`rating_range` ([1, 10]), `null_rating`, `tokenizer` / `chars_per_token` (3.0) for `max_length`, and the HTTP
client's `max_concurrency`, `timeout_s`, `max_retries`, `backoff_s`, `max_backoff_s`, `cache_dir`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rmeval.errors import RmevalError
from rmeval.io.hashing import sha256_text
from rmeval.models.api_client import ChatClient, ClientSettings, TokenCounter
from rmeval.models.base import BatchScores, Prepared, RewardScorer, Runtime
from rmeval.registry import ModelSpec
from rmeval.tasks import POSITIONS, Pairs

DEFAULT_PROMPT_KEYS = {"direct": "rmeval_direct", "pairwise": "rmeval_pairwise"}
PLACEHOLDERS = {"direct": ("problem", "eval_solution"), "pairwise": ("problem", "eval_solution_A", "eval_solution_B")}

# --- parsing ------------------------------------------------------------------------------------------
_NUMBER = r"(\d+(?:\.\d+)?)"
_BRACKET_RATING = re.compile(r"\[\[\s*(?:rating\s*:?\s*)?" + _NUMBER + r"\s*(?:/\s*\d+)?\s*\]\]", re.IGNORECASE)
_LABELLED_RATING = re.compile(
    r"(?:rating|score|grade|\[RESULT\])\s*(?:\(\s*1\s*-\s*10\s*\))?\s*[:=]?\s*\**\s*\[?\s*" + _NUMBER + r"(?!\d)",
    re.IGNORECASE,
)
_WHO = r"(?:assistant|response|answer|solution|output)?\s*"
_BRACKET_VERDICT = re.compile(r"\[\[\s*" + _WHO + r"([AB])\s*\]\]", re.IGNORECASE)
_LABELLED_VERDICT = re.compile(
    r"(?:judge?ment|verdict|\[RESULT\]|winner|better\s+(?:one|answer|response|solution)\s+is)\s*:?\s*\**\s*"
    r"\(?\s*" + _WHO + r"\(?([AB])\)?(?![A-Za-z])",
    re.IGNORECASE,
)


def parse_rating(text: str | None, low: float = 1, high: float = 10) -> float | None:
    """The judge's rating: the last `[[N]]`, else the last "Rating: N" (or Score / Grade / [RESULT]); None when
    there is none or it lies outside [low, high]."""
    if not text:
        return None
    for pattern in (_BRACKET_RATING, _LABELLED_RATING):
        matches = pattern.findall(text)
        if matches:
            value = float(matches[-1])
            return value if low <= value <= high else None
    return None


def parse_verdict(text: str | None) -> str | None:
    """'A' or 'B': the last `[[A]]` / `[[B]]`, else the last "Judgement: A" (or verdict / [RESULT] / winner);
    None when there is none (a tie `[[C]]` included)."""
    if not text:
        return None
    for pattern in (_BRACKET_VERDICT, _LABELLED_VERDICT):
        matches = pattern.findall(text)
        if matches:
            return matches[-1].upper()
    return None


def numbered_list(steps: list[str]) -> str:
    return "\n".join(f"{index}. {step}" for index, step in enumerate(steps, start=1))


def seeded_position(row_id: str) -> str:
    """A reproducible, balanced A / B for tables without recorded positions."""
    return POSITIONS[hashlib.sha256(row_id.encode()).digest()[0] % 2]


def other(position: str) -> str:
    return "B" if position == "A" else "A"


# --- prompts --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgePrompt:
    system: str | None
    user: str
    source: str  # file and key
    sha256: str

    def render(self, fields: dict[str, str]) -> list[dict[str, str]]:
        class Strict(dict):
            def __missing__(self, key: str) -> str:
                raise RmevalError(f"{source}: format.user uses {{{key}}}, which a judge cannot fill; "
                                  f"placeholders: {sorted(fields)}")

        source = self.source
        user = self.user.format_map(Strict(fields))
        messages = [{"role": "system", "content": self.system}] if self.system else []
        return [*messages, {"role": "user", "content": user}]


def default_prompt_file() -> Path:
    return Path(str(resources.files("rmeval") / "data" / "judge_prompts.yaml"))


def load_prompt(path: str | Path, key: str, mode: str) -> JudgePrompt:
    """One entry of a prompt file in the official `experiments_prompts.yaml` layout."""
    import yaml

    from rmeval.io.yaml_io import load_yaml

    path = Path(path)
    if not path.is_file():
        raise RmevalError(f"judge prompt file not found: {path} (options.prompt_file)")
    try:
        document = load_yaml(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise RmevalError(f"{path}: not valid YAML ({error})") from error
    entry = document.get(key) if isinstance(document, dict) else None
    where = f"{path}: {key}"
    if not isinstance(entry, dict):
        keys = sorted(document) if isinstance(document, dict) else []
        raise RmevalError(f"{path}: no prompt {key!r} (options.prompt_key); the file has {keys}")
    user = (entry.get("format") or {}).get("user")
    if not isinstance(user, str) or not user.strip():
        raise RmevalError(f"{where}: needs format.user")
    missing = [name for name in PLACEHOLDERS[mode] if "{" + name + "}" not in user]
    if missing:
        raise RmevalError(f"{where}: format.user lacks {missing} for a {mode} judge")
    system = entry.get("prompt")
    canonical = json.dumps({"prompt": system, "user": user}, sort_keys=True, ensure_ascii=False)
    return JudgePrompt(system if isinstance(system, str) and system.strip() else None, user, where,
                       sha256_text(canonical))


# --- the adapter ------------------------------------------------------------------------------------------
@dataclass
class _Request:
    """What one row sends: one body per order (the recorded order first)."""

    bodies: list[dict[str, Any]]
    position: str | None = None  # pairwise: where the chosen solution is in the first body


class JudgeScorer(RewardScorer):
    budget_unit = "requests"

    def __init__(self, spec: ModelSpec, runtime: Runtime) -> None:
        # Over the catalogue's defaults; load_scorer has checked keys, types, choices and `mode`.
        options = spec.adapter_entry.settings(spec.options)
        self.mode = options["mode"]
        self.spec = spec
        settings = ClientSettings.from_options(spec, cache_dir=runtime.extra.get("cache_dir"))
        self.prompt = load_prompt(options.get("prompt_file") or default_prompt_file(),
                                  str(options.get("prompt_key") or DEFAULT_PROMPT_KEYS[self.mode]), self.mode)
        self.temperature = float(options["temperature"])
        self.max_tokens = int(options["max_tokens"])
        self.n = int(options["n"])
        self.seed = options.get("seed")
        self.positions = str(options["positions"])
        self.both_orders = bool(options["both_orders"])
        low, high = (float(v) for v in options["rating_range"])
        self.rating_range = (low, high)
        null_rating = options.get("null_rating")
        self.null_rating = float(low if null_rating is None else null_rating)
        if self.n < 1 or self.max_tokens < 1:
            raise RmevalError(f"model {spec.name!r}: options.n and options.max_tokens must be >= 1")
        self.counter = TokenCounter(options.get("tokenizer"), float(options["chars_per_token"]), spec.name)
        if spec.max_length <= self.max_tokens:
            raise RmevalError(f"model {spec.name!r}: max_length {spec.max_length} must exceed options.max_tokens "
                              f"{self.max_tokens} (the reply's share of the context)")
        self.client = ChatClient(settings, spec.name, key_optional=True)
        self.model_name = settings.model
        self.extra_columns = (
            ("rating", "n_parsed", "replies") if self.mode == "direct"
            else ("verdict", "chosen_position", "verdict_swapped", "replies")
        )
        self.pairs: Pairs | None = None
        self.requests: list[_Request | None] = []

    # --- building requests -------------------------------------------------------------------------
    def _solution(self, index: int) -> str:
        assert self.pairs is not None
        steps = self.pairs.steps[index] if self.pairs.steps is not None else None
        return numbered_list(steps) if steps else self.pairs.responses[index]

    def _body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model_name, "messages": messages, "temperature": self.temperature,
                                "max_tokens": self.max_tokens}
        if self.n > 1:
            body["n"] = self.n
        if self.seed is not None:
            body["seed"] = int(self.seed)
        return body

    def _fit(self, problem: str, solutions: list[str]) -> tuple[str, list[str], bool]:
        """Cut the solutions' ends (then the problem's start) until the prompt fits max_length - max_tokens."""
        budget = self.spec.max_length - self.max_tokens
        names = PLACEHOLDERS[self.mode][1:]

        def size(p: str, s: list[str]) -> int:
            messages = self.prompt.render({"problem": p, **dict(zip(names, s, strict=True))})
            return sum(self.counter.count(m["content"]) for m in messages) + 8 * len(messages)

        total = size(problem, solutions)
        if total <= budget:
            return problem, solutions, False
        frame = size(problem, [""] * len(solutions))
        if frame < budget:
            share = (budget - frame) // len(solutions)
            cut = [self.counter.keep_start(text, share) for text in solutions]
            if all(text.strip() for text in cut) and size(problem, cut) <= budget:
                return problem, cut, True
        bare = size("", [""] * len(solutions))
        share = max(1, (budget - bare) // (len(solutions) + 1))
        cut = [self.counter.keep_start(text, share) for text in solutions]
        problem = self.counter.keep_end(problem, share)
        if not all(text.strip() for text in cut) or size(problem, cut) > budget:
            raise RmevalError(f"model {self.spec.name!r}: the prompt cannot fit max_length={self.spec.max_length} "
                              f"with max_tokens={self.max_tokens}; raise max_length")
        return problem, cut, True

    def _pairwise_request(self, index: int, chosen_at: dict[str, int]) -> tuple[_Request | None, bool]:
        assert self.pairs is not None and self.pairs.comparisons is not None
        comparisons = self.pairs.comparisons
        if comparisons.is_chosen[index]:
            return None, False
        row_id = self.pairs.ids[index]
        group = comparisons.groups[index]
        if group not in chosen_at:
            raise RmevalError(f"row id={row_id!r}: its group {group!r} has no chosen solution to compare with")
        position = comparisons.chosen_position[index]
        if self.positions == "seeded":
            position = seeded_position(row_id)
        elif position is None:
            raise RmevalError(
                f"row id={row_id!r}: no recorded chosen_position for pairwise judge {self.spec.name!r}; give its "
                f"benchmark the recorded positions (config/README.md), or set options.positions: seeded"
            )
        chosen, rejected = self._solution(chosen_at[group]), self._solution(index)
        problem, (chosen, rejected), cut = self._fit(self.pairs.prompts[index], [chosen, rejected])
        bodies = []
        for where in [position, other(position)] if self.both_orders else [position]:
            a, b = (chosen, rejected) if where == "A" else (rejected, chosen)
            bodies.append(self._body(self.prompt.render(
                {"problem": problem, "eval_solution_A": a, "eval_solution_B": b})))
        return _Request(bodies, position), cut

    def prepare(self, pairs: Pairs) -> Prepared:
        self.pairs = pairs
        count = len(pairs)
        truncated = np.zeros(count, dtype=bool)
        self.requests = []
        if self.mode == "pairwise":
            if pairs.comparisons is None:
                raise RmevalError(f"model {self.spec.name!r}: a pairwise judge needs a table that says which rows "
                                  "compete (problem_id + solution_type, or pair_id + role)")
            chosen_at: dict[str, int] = {}
            for index, (group, is_chosen) in enumerate(zip(pairs.comparisons.groups, pairs.comparisons.is_chosen,
                                                           strict=True)):
                if is_chosen:
                    if group in chosen_at:
                        raise RmevalError(f"row id={pairs.ids[index]!r}: a second chosen solution in group {group!r}")
                    chosen_at[group] = index
            for index in range(count):
                request, truncated[index] = self._pairwise_request(index, chosen_at)
                self.requests.append(request)
        else:
            for index in range(count):
                problem, (solution,), truncated[index] = self._fit(pairs.prompts[index], [self._solution(index)])
                self.requests.append(_Request([self._body(self.prompt.render(
                    {"problem": problem, "eval_solution": solution}))]))
        costs = np.array([len(r.bodies) if r else 0 for r in self.requests], dtype=np.int64)
        return Prepared(costs=np.maximum(costs, 1), n_tokens=np.zeros(count, dtype=np.int64), truncated=truncated)

    # --- scoring --------------------------------------------------------------------------------------
    def _texts(self, row_id: str, body: dict[str, Any]) -> tuple[list[str | None], int]:
        def parse(reply: dict[str, Any]) -> list[str | None]:
            choices = reply.get("choices")
            if not isinstance(choices, list) or not choices:
                raise RmevalError(f"row id={row_id!r}: reply from {self.client.url} has no choices")
            if len(choices) < self.n:
                raise RmevalError(f"row id={row_id!r}: asked for n={self.n} samples, {self.client.url} returned "
                                  f"{len(choices)}; this server does not support `n`: set options.n to 1")
            texts = []
            for choice in choices:
                content = (choice.get("message") or {}).get("content") if isinstance(choice, dict) else None
                texts.append(content if isinstance(content, str) else None)
            return texts

        texts, usage = self.client.cached(row_id, body, parse)
        return texts, int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)

    def _vote(self, texts: list[str | None]) -> str | None:
        votes = Counter(v for v in (parse_verdict(t) for t in texts) if v is not None)
        if not votes:
            return None
        (first, count), *rest = votes.most_common()
        return None if rest and rest[0][1] == count else first

    def _score_row(self, index: int) -> tuple[float, int, dict[str, Any]]:
        assert self.pairs is not None
        row_id = self.pairs.ids[index]
        request = self.requests[index]
        if request is None:  # the chosen solution of a pairwise group: it is what the others are compared with
            return 0.0, 0, {"verdict": None, "chosen_position": None, "verdict_swapped": None, "replies": []}
        texts, tokens = self._texts(row_id, request.bodies[0])
        if self.mode == "direct":
            ratings = [r for r in (parse_rating(t, *self.rating_range) for t in texts) if r is not None]
            rating = sum(ratings) / len(ratings) if ratings else None
            reward = rating if rating is not None else self.null_rating
            return reward, tokens, {"rating": rating, "n_parsed": len(ratings), "replies": [t or "" for t in texts]}
        verdict = self._vote(texts)
        swapped = None
        replies = [t or "" for t in texts]
        if len(request.bodies) > 1:
            swapped_texts, more = self._texts(row_id, request.bodies[1])
            swapped, tokens = self._vote(swapped_texts), tokens + more
            replies += [t or "" for t in swapped_texts]
        won = verdict is not None and verdict == request.position
        return (-1.0 if won else 1.0), tokens, {"verdict": verdict, "chosen_position": request.position,
                                                "verdict_swapped": swapped, "replies": replies}

    def score(self, indices: np.ndarray) -> BatchScores:
        results = self.client.map(self._score_row, [int(i) for i in indices])
        extra = {name: [columns[name] for _, _, columns in results] for name in self.extra_columns}
        return BatchScores(rewards=np.array([r for r, _, _ in results], dtype=np.float64),
                           n_tokens=np.array([t for _, t, _ in results], dtype=np.int64), extra=extra)

    def describe(self) -> dict[str, Any]:
        return {
            **self.client.identity(self.model_name),
            "mode": self.mode,
            "prompt": self.prompt.source,
            "prompt_sha256": self.prompt.sha256,
            "sampling": {"temperature": self.temperature, "max_tokens": self.max_tokens, "n": self.n,
                         "seed": self.seed},
            "positions": self.positions if self.mode == "pairwise" else None,
            "both_orders": self.both_orders if self.mode == "pairwise" else None,
            "rating_range": list(self.rating_range) if self.mode == "direct" else None,
            "null_rating": self.null_rating if self.mode == "direct" else None,
            "token_counter": self.counter.kind,
            **self.client.describe(),
        }

    def summarize_output(self, table: Any) -> dict[str, Any]:
        return judge_summary(table, self.mode, self.both_orders)

    def close(self) -> None:
        self.client.close()


def judge_summary(table: Any, mode: str, both_orders: bool) -> dict[str, Any]:
    """Null counts and position agreement of one judge output table (for .meta.json and the logs)."""
    if mode == "direct":
        return {"n_judged": int(len(table)), "n_null": int(table["rating"].isna().sum())}
    judged = table[table["chosen_position"].notna()]
    summary: dict[str, Any] = {"n_judged": int(len(judged)), "n_null": int(judged["verdict"].isna().sum())}
    if both_orders:
        both = judged[judged["verdict"].notna() & judged["verdict_swapped"].notna()]
        # The same solution preferred in both orders: the swapped verdict names the other letter.
        agree = [v != s for v, s in zip(both["verdict"], both["verdict_swapped"], strict=True)]
        summary["n_null_swapped"] = int(judged["verdict_swapped"].isna().sum())
        summary["n_both_orders"] = len(agree)
        summary["position_agreement"] = round(sum(agree) / len(agree), 6) if agree else None
    return summary
