"""Token and reward parity with the published usage, for the sequence-classification entries and the PRM.

For each registry entry (its own `config/models.yaml` settings, pointed at a tiny random-weight model whose
tokenizer has the published layout, see tokenizer_layouts.py) the reward is computed the way the authors'
code does, one row at a time, and compared with rmeval's batched, padded scores: the token ids must be
identical and the rewards equal to 1e-5 in fp32.

Reference computations (one row at a time, no padding):
- RLHFlow (FsfairX, RM-Mistral-7B, Mistral-RAFT): RLHFlow/RLHF-Reward-Modeling@fc39179
  bradley-terry-rm/README.md, mistral_7B_rm.py, llama3_8B_rm.py: `apply_chat_template(tokenize=False)
  .replace(bos_token, "")`, then `tokenizer(text)` (the "sentiment-analysis" pipeline with
  function_to_apply="none" is this forward and logit 0).
- Skywork-Reward-V2: SkyworkAI/Skywork-Reward-V2@4f380f4 README.md: strip a leading BOS text,
  `tokenizer(text, return_tensors="pt")`, `model(**inputs).logits[0][0]`.
- tulu-v2.5 RM: hamishivi/EasyLM@dbf2212 EasyLM/data.py PreferenceDataset: `bos_token + "<|user|>\\n" +
  p.strip() + "\\n<|assistant|>\\n" + r.strip() + eos + "\\n"` stripped, tokenised without special tokens by
  the Llama-2 (legacy SentencePiece) tokenizer of 2024, reward at the last token.
- Math-Shepherd PRM (peiyi9979/math-shepherd-mistral-7b-prm model card): `tokenizer.encode(f"{q} {steps}")`
  with BOS, `logits[:, :, candidates].softmax(-1)[:, :, 0]` at the `ки` positions.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from rmeval.models import load_scorer
from rmeval.models.base import Runtime
from rmeval.models.chat import template_sha256
from rmeval.registry import spec_from_mapping
from rmeval.scoring.engine import EngineSettings, score_rows
from rmeval.scoring.job import JobRequest, run_job
from rmeval.tasks import Pairs
from rmeval.testing.tiny_model import corpus_text
from tokenizer_layouts import (
    LAYOUTS,
    MISTRAL_TEMPLATE,
    TULU2_SHIPPED_TEMPLATE,
    save_llama3_tokenizer,
    save_qwen3_tokenizer,
    save_sentencepiece_tokenizer,
    save_tiny_model,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
REGISTRY = yaml.safe_load((REPO_ROOT / "config" / "models.yaml").read_text())["models"]
TOLERANCE = 1e-5


def _rows() -> Pairs:
    """Rows of clearly different lengths, so one batch pads most of them."""
    lines = [line for line in corpus_text().splitlines() if line.strip()]
    titles = [line.removeprefix("Write an abstract for a paper with title ") for line in lines if line.startswith("Write")]
    bodies = [line for line in lines if not line.startswith("Write")]
    prompts, responses = [], []
    for index in range(6):
        prompts.append(f"Write an abstract for a paper with title {titles[index % len(titles)]}")
        responses.append(" ".join(bodies[index : index + 1 + 2 * index]))
    return Pairs(ids=[f"r{i}" for i in range(len(prompts))], prompts=prompts, responses=responses, steps=None)


ROWS = _rows()


def _spec(registry_name: str, path: Path, **overrides):
    entry = {key: value for key, value in REGISTRY[registry_name].items() if key != "rewardbench_rank"}
    entry.update(name=registry_name, path=str(path), revision=None, dtype="float32", resources={"gpu": 0}, **overrides)
    return spec_from_mapping(entry, where=f"test:{registry_name}")


def _rmeval(spec, padding_side: str | None = None, pairs: Pairs = ROWS):
    """rmeval's scores with every row in one padded batch, and the ids it fed."""
    scorer = load_scorer(spec, Runtime(device="cpu", dtype="float32", padding_side=padding_side))
    prepared = scorer.prepare(pairs)
    table, report = score_rows(scorer, pairs, prepared, EngineSettings(100_000, 64, 0), None, spec.name)
    assert report.batches == 1 and len(set(prepared.n_tokens.tolist())) > 1, "the batch must pad"
    ids = [scorer.encoded.row(i).tolist() for i in range(len(pairs))]
    return table, ids, scorer


def _forward(model, ids: list[int]) -> float:
    import torch

    with torch.inference_mode():
        return float(model(input_ids=torch.tensor([ids])).logits[0][0])


@functools.cache
def _load(path: Path, causal_lm: bool = False):
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    auto = AutoModelForCausalLM if causal_lm else AutoModelForSequenceClassification
    return AutoTokenizer.from_pretrained(path), auto.from_pretrained(path, dtype="float32").eval()


def rlhflow_card(path: Path, prompt: str, response: str) -> tuple[list[int], float]:
    tokenizer, model = _load(path)
    chat = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
    text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=False).replace(tokenizer.bos_token, "")
    ids = tokenizer(text)["input_ids"]
    return ids, _forward(model, ids)


def skywork_card(path: Path, prompt: str, response: str) -> tuple[list[int], float]:
    tokenizer, model = _load(path)
    text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}, {"role": "assistant", "content": response}],
                                         tokenize=False)
    if tokenizer.bos_token is not None and text.startswith(tokenizer.bos_token):
        text = text[len(tokenizer.bos_token):]
    inputs = tokenizer(text, return_tensors="pt")
    import torch

    with torch.inference_mode():
        return inputs["input_ids"][0].tolist(), float(model(**inputs).logits[0][0])


def easylm_tulu(path: Path, training_tokenizer_path: Path, prompt: str, response: str) -> tuple[list[int], float]:
    tokenizer = _load(training_tokenizer_path)[0]
    model = _load(path)[1]
    text = "<|user|>\n" + prompt.strip() + "\n" + "<|assistant|>\n" + response.strip() + tokenizer.eos_token + "\n"
    ids = tokenizer(tokenizer.bos_token + text.strip(), add_special_tokens=False)["input_ids"]
    return ids, _forward(model, ids)


def _assert_parity(table, fed_ids, reference) -> float:
    worst = 0.0
    for row, prompt in enumerate(ROWS.prompts):
        ids, reward = reference(prompt, ROWS.responses[row])
        assert fed_ids[row] == list(ids), f"row {row}: token ids differ"
        worst = max(worst, abs(float(table["reward"][row]) - reward))
    assert worst <= TOLERANCE, worst
    return worst


# --- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fsfairx_dir(tmp_path_factory) -> Path:
    path = save_llama3_tokenizer(tmp_path_factory.mktemp("fsfairx"))
    from transformers import AutoTokenizer

    return save_tiny_model(path, "llama", seed=11, pad_token_id=AutoTokenizer.from_pretrained(path).pad_token_id)


def _mistral_rm(root: Path, layout: str, seed: int) -> Path:
    from transformers import AutoTokenizer

    path = save_sentencepiece_tokenizer(root / layout, layout=layout, chat_template=MISTRAL_TEMPLATE, pad_token="[PAD]")
    return save_tiny_model(path, "mistral", seed=seed, pad_token_id=AutoTokenizer.from_pretrained(path).pad_token_id)


@pytest.fixture(scope="module")
def mistral_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mistral-rm")
    return {layout: _mistral_rm(root, layout, seed=12) for layout in LAYOUTS}


@pytest.fixture(scope="module")
def tulu_dirs(tmp_path_factory) -> dict[str, Path]:
    """Llama-2 SentencePiece tokenizer shipping the Tulu 2 template, no pad token, config without pad_token_id."""
    root = tmp_path_factory.mktemp("tulu-rm")
    dirs = {}
    for layout in LAYOUTS:
        path = save_sentencepiece_tokenizer(root / layout, layout=layout, chat_template=TULU2_SHIPPED_TEMPLATE)
        dirs[layout] = save_tiny_model(path, "llama", seed=13, pad_token_id=None)
    return dirs


@pytest.fixture(scope="module")
def skywork_dir(tmp_path_factory) -> Path:
    path = save_qwen3_tokenizer(tmp_path_factory.mktemp("skywork"))
    from transformers import AutoTokenizer

    return save_tiny_model(path, "qwen3", seed=14, pad_token_id=AutoTokenizer.from_pretrained(path).pad_token_id)


# --- tests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_fsfairx_matches_rlhflow_usage(fsfairx_dir: Path, padding_side: str) -> None:
    table, ids, scorer = _rmeval(_spec("FsfairX-LLaMA3-RM-v0.1", fsfairx_dir), padding_side)
    _assert_parity(table, ids, lambda p, r: rlhflow_card(fsfairx_dir, p, r))
    assert scorer.describe()["chat_template_source"] == "tokenizer"


@pytest.mark.parametrize("name", ["RM-Mistral-7B", "Mistral-RM-for-RAFT-GSHF-v0"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mistral_rms_match_rlhflow_usage_in_every_layout(mistral_dirs: dict[str, Path], name: str, layout: str) -> None:
    path = mistral_dirs[layout]
    table, ids, _ = _rmeval(_spec(name, path))
    _assert_parity(table, ids, lambda p, r: rlhflow_card(path, p, r))
    from transformers import AutoTokenizer

    # The word after BOS keeps its word-start marker, as in the authors' tokenisation.
    assert AutoTokenizer.from_pretrained(path).convert_ids_to_tokens(ids[0][:2])[1].startswith("▁")


def test_literal_bos_text_would_drop_the_word_start_marker(mistral_dirs: dict[str, Path]) -> None:
    """Why the BOS text is stripped: tokenising `<s>[INST]` as text in the non-legacy layout gives `[`, not `▁[`."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(mistral_dirs["non-legacy"])
    literal = tokenizer("<s>[INST] Hello", add_special_tokens=False)["input_ids"]
    stripped = tokenizer("[INST] Hello")["input_ids"]
    assert literal[0] == stripped[0] == tokenizer.bos_token_id
    assert literal[1:] != stripped[1:] and tokenizer.convert_ids_to_tokens(literal[1]) == "["


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tulu_matches_its_easylm_training_tokenisation(tulu_dirs: dict[str, Path], layout: str) -> None:
    table, ids, scorer = _rmeval(_spec("tulu-v2.5-13b-preference-mix-rm", tulu_dirs[layout]))
    _assert_parity(table, ids, lambda p, r: easylm_tulu(tulu_dirs[layout], tulu_dirs["legacy"], p, r))
    details = scorer.describe()
    assert details["chat_template_source"] == "registry"
    # No pad id in the config: rmeval pads with an id no row contains, so a row ending in </s> keeps its reward.
    assert scorer.pad_id not in set(np.concatenate([np.asarray(row) for row in ids]).tolist())


def test_tulu_shipped_template_adds_a_newline_after_eos(tulu_dirs: dict[str, Path]) -> None:
    """The tokenizer's own Tulu 2 template ends in `</s>\\n`: not the training-time ids, hence the override."""
    path = tulu_dirs["legacy"]
    _, shipped, _ = _rmeval(_spec("tulu-v2.5-13b-preference-mix-rm", path, chat_template=None))
    _, override, _ = _rmeval(_spec("tulu-v2.5-13b-preference-mix-rm", path))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    for row in range(len(ROWS)):
        extra = shipped[row][len(override[row]) :]
        assert shipped[row][: len(override[row])] == override[row] and override[row][-1] == tokenizer.eos_token_id
        assert extra and "".join(tokenizer.convert_ids_to_tokens(extra)).strip("▁") == "\n"  # `▁`, `\n` in Llama-2


def test_skywork_matches_its_readme(skywork_dir: Path) -> None:
    table, ids, _ = _rmeval(_spec("Skywork-Reward-V2-Qwen3-0.6B", skywork_dir))
    _assert_parity(table, ids, lambda p, r: skywork_card(skywork_dir, p, r))


def test_meta_records_the_template_actually_used(mistral_dirs: dict[str, Path], tmp_path: Path) -> None:
    import pandas as pd

    path = mistral_dirs["non-legacy"]
    table_path = tmp_path / "group.parquet"
    pd.DataFrame({"id": ROWS.ids, "prompt": ROWS.prompts, "response": ROWS.responses}).to_parquet(table_path)
    out = tmp_path / "scores" / "group.parquet"
    run_job(JobRequest(spec=_spec("RM-Mistral-7B", path), task="pairs", input=table_path, output=out,
                       meta=out.with_name("group.meta.json")))
    details = json.loads(out.with_name("group.meta.json").read_text())["adapter_details"]
    assert details["chat_template_source"] == "tokenizer"
    assert details["chat_template_sha256"] == template_sha256(MISTRAL_TEMPLATE)
    assert details["template_writes_bos"] is True and details["bos_prepended"] is True
    assert len(details["input_ids_sha256"]) == 16


# --- Math-Shepherd PRM ---------------------------------------------------------------------------
STEPS = [
    ["Let x be the number of papers.", "Then 3x + 2 = 11, so 3x = 9.", "Therefore x = 3. The answer is 3."],
    ["The model is trained on the data."],
    ["We compute 7 + 8 = 15.", "Then 15 - 3 = 12.", "We add 10 to get 22.", "The answer is 22."],
    ["The reward is positive.", "So the answer is 1."],
]
PROBLEMS = ["How many papers are there?", "What is the model trained on?", "Compute 7 + 8 - 3 + 10.", "Is the reward positive?"]


@pytest.fixture(scope="module")
def prm_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("math-shepherd")
    dirs = {}
    for layout in LAYOUTS:
        path = save_sentencepiece_tokenizer(root / layout, layout=layout, chat_template=None)
        dirs[layout] = save_tiny_model(path, "mistral", seed=15, causal_lm=True)
    return dirs


def math_shepherd_card(path: Path, question: str, steps: list[str]) -> tuple[list[int], list[float]]:
    import torch

    tokenizer, model = _load(path, causal_lm=True)
    candidate_tokens = tokenizer.encode("+ -")[1:]
    step_tag_id = tokenizer.encode("ки")[-1]
    output = "\n".join(f"{step} ки" for step in steps)
    input_id = torch.tensor([tokenizer.encode(f"{question} {output}")])
    with torch.inference_mode():
        logits = model(input_id).logits[:, :, candidate_tokens]
    scores = logits.softmax(dim=-1)[:, :, 0]
    return input_id[0].tolist(), scores[input_id == step_tag_id].tolist()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_math_shepherd_matches_its_model_card(prm_dirs: dict[str, Path], layout: str) -> None:
    path = prm_dirs[layout]
    pairs = Pairs(ids=[f"s{i}" for i in range(len(STEPS))], prompts=PROBLEMS,
                  responses=["\n".join(steps) for steps in STEPS], steps=STEPS)
    table, ids, scorer = _rmeval(_spec("math-shepherd-mistral-7b-prm", path), pairs=pairs)
    assert scorer.describe()["chat_template_source"].startswith("none")
    worst = 0.0
    for row, (problem, steps) in enumerate(zip(PROBLEMS, STEPS, strict=True)):
        reference_ids, reference = math_shepherd_card(path, problem, steps)
        assert ids[row] == reference_ids, f"row {row}: token ids differ"
        got = np.asarray(table["step_rewards"][row], dtype=np.float64)
        assert len(got) == len(steps)
        worst = max(worst, float(np.max(np.abs(got - np.asarray(reference)))))
        assert abs(float(table["reward"][row]) - float(np.prod(reference))) <= TOLERANCE
    assert worst <= TOLERANCE, worst
