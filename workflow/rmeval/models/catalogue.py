"""The adapter catalogue: every registry `adapter`, its scorer class, how it scores and the `options` it reads.

Adding an adapter kind is one module in rmeval/models/ and one entry in `ADAPTERS` below. The registry
(rmeval.registry) checks entries against it, `load_scorer` imports the class it names, and the scoring job,
resources, download and preflight read its flags instead of lists of adapter names.

Import-free (no torch, transformers, requests or yaml): Snakemake reads it at parse time.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The kinds of value an option holds: the Python types of each, and its name in messages.
_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "string": ((str,), "a string"), "integer": ((int,), "an integer"), "number": ((int, float), "a number"),
    "boolean": ((bool,), "true or false"), "mapping": ((dict,), "a mapping"), "list": ((list, tuple), "a list"),
}


@dataclass(frozen=True)
class Option:
    """One key of an entry's `options:`. `default` is what the adapter uses when the key is absent; None means
    the adapter works it out (the entry's `path`, another option, an environment variable) or goes without."""

    name: str
    kind: str  # a key of _KINDS
    help: str
    default: Any = None
    choices: tuple[Any, ...] = ()
    required: bool = False
    # (another option, its value): this option applies only then (a random baseline's seed); else it is refused
    applies_when: tuple[str, Any] | None = None

    def problem(self, value: Any) -> str | None:
        """Why `value` does not fit this option, or None. A null stands for "absent" when there is no default."""
        if value is None:
            return None if self.default is None and not self.required else f"got null; expected {self.expected()}"
        bool_for_number = isinstance(value, bool) and self.kind != "boolean"
        if bool_for_number or not isinstance(value, _KINDS[self.kind][0]):
            return f"got {value!r}; expected {self.expected()}"
        if self.choices and value not in self.choices:
            return f"got {value!r}; allowed: {', '.join(map(str, self.choices))}"
        return None

    def expected(self) -> str:
        return "one of " + ", ".join(map(str, self.choices)) if self.choices else _KINDS[self.kind][1]


@dataclass(frozen=True)
class Adapter:
    name: str
    scorer: str  # "module:Class" of its RewardScorer, imported only when a model is loaded
    summary: str
    remote: bool = False  # scores over HTTP: nothing to download, no GPU, no torch in the job
    native_head: bool = False  # rmeval's own head (rmeval.models.heads): never runs the model repository's code
    judge: bool = False  # an LLM judge: options.mode says direct or pairwise
    api_key_required: bool = False  # the endpoint refuses requests without the key in options.api_key_env
    # no weights: a rule computed from the row's text (the trivial baselines). Nothing to download or load, no GPU,
    # no torch, no model server, no `path` (it defaults to `default_path`)
    weightless: bool = False
    # vLLM's pooling runner (`engine: vllm`) gives this adapter's reward exactly: the head's logit 0 at the token the
    # transformers head reads (rmeval.vllm.scorer). The others refuse that engine, naming the adapter.
    vllm_pooling: bool = False
    options: tuple[Option, ...] = ()
    # the options whose values make a weightless entry's default `path` (None: its required options)
    path_options: tuple[str, ...] | None = None

    @property
    def loads_model(self) -> bool:
        """Loads weights on this machine (download, GPU, torch, the model server): neither an endpoint nor a rule."""
        return not (self.remote or self.weightless)

    def default_path(self, options: dict[str, Any]) -> str | None:
        """The `path` of an entry that names none: `<adapter>:<required options>` for a weightless adapter
        (`baseline:length`), what the lock and `rmeval models` show; None for an adapter that needs a path."""
        if not self.weightless:
            return None
        names = self.path_options if self.path_options is not None else [o.name for o in self.options if o.required]
        return ":".join([self.name, *(str(options.get(name)) for name in names if options.get(name) is not None)])

    @property
    def option_names(self) -> list[str]:
        return [option.name for option in self.options]

    def option(self, name: str) -> Option:
        return next(option for option in self.options if option.name == name)

    @property
    def api_key_env(self) -> str | None:
        """The default variable holding the endpoint's key (remote adapters)."""
        return self.option("api_key_env").default if "api_key_env" in self.option_names else None

    def settings(self, options: dict[str, Any]) -> dict[str, Any]:
        """The entry's options over the catalogue's defaults: what the adapter reads."""
        defaults = {option.name: option.default for option in self.options if option.default is not None}
        return {**defaults, **options}

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        """One line per problem, each starting with its key path (`options.foo: ...`)."""
        known = self.option_names
        lines = []
        for key, value in options.items():
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                hint = f"did you mean `{close[0]}`? " if close else ""
                allowed = ", ".join(known) if known else "none (this adapter reads no options)"
                lines.append(f"options.{key}: unknown option for adapter {self.name!r}; {hint}allowed: {allowed}")
            elif (problem := self.option(key).problem(value)) is not None:
                lines.append(f"options.{key}: {problem}")
            elif (when := self.option(key).applies_when) is not None and options.get(when[0]) != when[1]:
                lines.append(f"options.{key}: applies only with {when[0]}: {when[1]} (got {when[0]}: "
                             f"{options.get(when[0])!r}); remove it")
        for option in self.options:
            if option.required and option.name not in options:
                lines.append(f"options.{option.name}: missing; adapter {self.name!r} needs it ({option.help})")
        return lines


def _client_options(api_key_env: str, chars_per_token: float) -> tuple[Option, ...]:
    """The options of rmeval.models.api_client, shared by the adapters that score through an endpoint."""
    return (
        Option("base_url", "string", "the OpenAI-compatible endpoint, up to /v1", required=True),
        Option("model", "string", "model name sent in each request; default: the entry's path"),
        Option("api_key_env", "string", "environment variable holding the key", default=api_key_env),
        Option("max_concurrency", "integer", "requests in flight", default=8),
        Option("timeout_s", "number", "seconds per request", default=60),
        Option("max_retries", "integer", "retries on 429, 5xx, timeouts", default=8),
        Option("backoff_s", "number", "first retry wait, doubled on each retry", default=1.0),
        Option("max_backoff_s", "number", "longest retry wait", default=60),
        Option("cache_dir", "string", "reply cache; default $RMEVAL_API_CACHE or ~/.cache/rmeval/api"),
        Option("tokenizer", "string", "tokenizer counting tokens for max_length; default: characters / chars_per_token"),
        Option("chars_per_token", "number", "characters per token without a tokenizer", default=chars_per_token),
    )


BASELINE = "baseline"  # the adapter of the trivial baselines: `is_baseline` tells them from models
PUBLISHED = "published"  # the adapter of published per-item results: `is_published` tells them from models run here

_JUDGE_OPTIONS = (
    Option("mode", "string", "direct or pairwise", choices=("direct", "pairwise"), required=True),
    Option("prompt_file", "string", "prompts in the official experiments_prompts.yaml layout; default: rmeval's own"),
    Option("prompt_key", "string", "entry of prompt_file; default rmeval_direct / rmeval_pairwise"),
    Option("temperature", "number", "sampling temperature", default=0.0),
    Option("max_tokens", "integer", "longest reply", default=2048),
    Option("n", "integer", "samples per request (ratings averaged, verdicts by majority)", default=1),
    Option("seed", "integer", "sampling seed sent with each request"),
    Option("positions", "string", "where pairwise judges show the chosen solution", default="recorded",
           choices=("recorded", "seeded")),
    Option("both_orders", "boolean", "also judge each pair with A and B swapped", default=False),
    Option("rating_range", "list", "lowest and highest rating", default=(1, 10)),
    Option("null_rating", "number", "rating of an unparsable reply; default the bottom of rating_range"),
)

_PRM_OPTIONS = (
    Option("step_tag", "string", "text closing each step; its last token is read", default="ки"),
    Option("good_token", "string", "token of a good step", default="+"),
    Option("bad_token", "string", "token of a bad step", default="-"),
    Option("step_separator", "string", "text between steps", default="\n"),
    Option("good_token_id", "integer", "id of the good token, with bad_token_id, when the strings are ambiguous"),
    Option("bad_token_id", "integer", "id of the bad token, with good_token_id"),
)

_ENTRIES = (
    Adapter("sequence-classification", "rmeval.models.sequence_classification:SequenceClassificationScorer",
            "AutoModelForSequenceClassification; the reward is logit 0 at the last token", vllm_pooling=True),
    Adapter("armorm", "rmeval.models.armorm:ArmoRMScorer", "RLHFlow ArmoRM, rmeval's native head", native_head=True),
    Adapter("grm", "rmeval.models.grm:GRMScorer", "GRM value head, rmeval's native head", native_head=True),
    Adapter("eurus", "rmeval.models.eurus:EurusScorer", "Eurus-RM, rmeval's native head", native_head=True),
    Adapter("nemotron-api", "rmeval.models.nemotron_api:NemotronApiScorer",
            "Nemotron-4-340B-Reward's HelpSteer2 attributes over an OpenAI-compatible endpoint",
            remote=True, api_key_required=True, options=(
                *_client_options("NVIDIA_API_KEY", 2.5),
                Option("weights", "mapping", "attribute -> weight; default the model card's"),
                Option("template_tokens", "integer", "tokens the endpoint's template adds", default=16),
            )),
    Adapter("prm", "rmeval.models.prm:PRMScorer", "process reward model: one score per step (Math-Shepherd)",
            options=_PRM_OPTIONS),
    Adapter("inf-orm", "rmeval.models.inform:INFORMScorer", "INF-ORM's MLP score head, rmeval's native head",
            native_head=True),
    Adapter("first-token-logit", "rmeval.models.first_token_logit:FirstTokenLogitScorer",
            "causal LM read at the first generated position (Llama-3.1-Nemotron-70B-Reward-HF)", options=(
                Option("token_id", "integer", "vocabulary id whose logit is the reward", default=0),
            )),
    Adapter("qwen-prm", "rmeval.models.qwen_prm:QwenPRMScorer",
            "Qwen2.5-Math-PRM: P(positive) at each step separator, rmeval's native head", native_head=True, options=(
                Option("step_token", "string", "special token closing each step", default="<extra_0>"),
                Option("system_prompt", "string", "system turn of the model card",
                       default="Please reason step by step, and put your final answer within \\boxed{}."),
            )),
    Adapter("generative-prm", "rmeval.models.generative_prm:GenerativePRMScorer",
            "RLHFlow generative PRM: each step a user turn, P(good) at its assistant turn", options=(
                Option("good_token", "string", "assistant reply of a good step", default="+"),
                Option("bad_token", "string", "assistant reply of a bad step", default="-"),
                Option("read_offset", "integer", "tokens from the end of the conversation up to a step's reply "
                       "to the reading position (the card's -3 for Llama-3.1)", default=3),
            )),
    # Trivial baselines (rmeval.models.baseline): a rule on the response text, configured like any model.
    Adapter(BASELINE, "rmeval.models.baseline:BaselineScorer",
            "trivial baseline: the response's length in characters, a seeded random reward, or a constant",
            weightless=True, options=(
                Option("kind", "string", "length, random or constant", choices=("length", "random", "constant"),
                       required=True),
                Option("seed", "integer", "seed of the random reward", default=0, applies_when=("kind", "random")),
                Option("value", "number", "the constant reward", default=0.0, applies_when=("kind", "constant")),
            )),
    # Published per-item results (rmeval.models.published, rmeval.published): the authors' results file of a model
    # they ran, or an earlier rmeval run's score files, read instead of running the model. No weights, no GPU.
    Adapter(PUBLISHED, "rmeval.models.published:PublishedScorer",
            "published per-item results: the authors' results file, or an earlier run's score files (no weights)",
            weightless=True, path_options=("benchmark", "model"), options=(
                Option("source", "string", "github (repo + commit), hub (a dataset repo + revision), local (a file "
                       "in the authors' format) or run (an earlier rmeval run's results/ folder)",
                       choices=("github", "hub", "local", "run"), required=True),
                Option("path", "string", "the file in the repository (github, hub), on this machine (local), or the "
                       "earlier run's results/ folder (run)", required=True),
                Option("benchmark", "string", "the benchmark the file holds results of (not with source: run: its "
                       "folder says)"),
                Option("model", "string", "the published model's name, as the file names it (source: run: the model's "
                       "name in that run)"),
                Option("repo", "string", "the repository (owner/name) of source github or hub"),
                Option("commit", "string", "the commit of source github (40 hex)"),
                Option("revision", "string", "the dataset revision of source hub (a commit pins it)"),
                Option("sha256", "string", "the file's sha256; when set, a file that differs is refused"),
                Option("leaderboard", "number", "the headline the authors' leaderboard page shows for it (percent), "
                       "with `leaderboard_source`: the tables say by how much rmeval's scoring of the file differs"),
                Option("leaderboard_source", "string", "where and when that value was read (page, date)"),
            )),
    # A local server (vLLM, SGLang) needs no key: the judge sends none when the variable is unset.
    Adapter("judge", "rmeval.models.judge:JudgeScorer", "LLM judge over an OpenAI-compatible endpoint",
            remote=True, judge=True, options=(*_client_options("OPENAI_API_KEY", 3.0), *_JUDGE_OPTIONS)),
)

ADAPTERS: dict[str, Adapter] = {entry.name: entry for entry in _ENTRIES}


def is_baseline(model: Any) -> bool:
    """Whether a model is a trivial baseline (adapter `baseline`), not a reward model: `model` is its resolved entry
    (rmeval.registry.ModelSpec), or a mapping with its `adapter` (an entry as written, a score sidecar, a lock's
    model record). The one test of it: tables, summaries and comparisons mark baselines by it."""
    adapter = model.get("adapter") if isinstance(model, Mapping) else getattr(model, "adapter", None)
    return adapter == BASELINE


def is_published(model: Any) -> bool:
    """Whether a model's results are published ones read from a file (adapter `published`), not a model run here:
    `model` as in `is_baseline`. Tables, summaries and comparisons mark them by it."""
    adapter = model.get("adapter") if isinstance(model, Mapping) else getattr(model, "adapter", None)
    return adapter == PUBLISHED


def unknown_adapter(name: Any) -> str:
    """`unknown adapter 'x'; did you mean ...? known adapters: [...]`."""
    close = difflib.get_close_matches(str(name), list(ADAPTERS), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown adapter {name!r}; {hint}known adapters: {list(ADAPTERS)}"
