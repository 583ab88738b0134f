"""Chat-template hygiene and truncation (rmeval.models.chat)."""

from __future__ import annotations

import pytest
from rmeval.errors import RmevalError
from rmeval.models.chat import RowEncoder, chat_template_renderer
from rmeval.testing.tiny_model import BOS, build_tokenizer

NO_BOS_TEMPLATE = "{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>{{ m['content'] }}<|eot_id|>{% endfor %}"


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


@pytest.fixture(scope="module")
def bos_adding_tokenizer():
    """A tokenizer whose default encoding prepends BOS, like Llama-2/Mistral ones."""
    from tokenizers.processors import TemplateProcessing

    tokenizer = build_tokenizer()
    bos_id = tokenizer.bos_token_id
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, bos_id)]
    )
    return tokenizer


def _encoder(tokenizer, template=None, add_bos=None, max_length=4096, truncation="prompt-left"):
    return RowEncoder(tokenizer, chat_template_renderer(tokenizer, template, "m"), max_length=max_length,
                      truncation=truncation, add_bos=add_bos, model_name="m")


def test_template_bos_is_not_duplicated_by_a_bos_adding_tokenizer(bos_adding_tokenizer) -> None:
    # The tokenizer adds BOS by default AND the template writes one: exactly one must remain.
    assert bos_adding_tokenizer("a")["input_ids"][0] == bos_adding_tokenizer.bos_token_id
    encoded = _encoder(bos_adding_tokenizer).encode(["r1"], ["Q"], ["A"])
    row = encoded.row(0).tolist()
    assert row[0] == bos_adding_tokenizer.bos_token_id and row[1] != bos_adding_tokenizer.bos_token_id


def test_template_without_bos_gets_the_tokenizers_default(bos_adding_tokenizer, tokenizer) -> None:
    with_default = _encoder(bos_adding_tokenizer, template=NO_BOS_TEMPLATE).encode(["r1"], ["Q"], ["A"])
    assert with_default.row(0)[0] == bos_adding_tokenizer.bos_token_id
    without_default = _encoder(tokenizer, template=NO_BOS_TEMPLATE).encode(["r1"], ["Q"], ["A"])
    assert without_default.row(0)[0] != tokenizer.bos_token_id


def test_registry_add_bos_overrides_both_ways(tokenizer) -> None:
    bos = tokenizer.bos_token_id
    stripped = _encoder(tokenizer, add_bos=False).encode(["r1"], ["Q"], ["A"])  # template writes BOS
    assert bos not in stripped.row(0).tolist()
    added = _encoder(tokenizer, template=NO_BOS_TEMPLATE, add_bos=True).encode(["r1"], ["Q"], ["A"])
    assert added.row(0)[0] == bos and added.row(0)[1] != bos


def test_template_override_is_used(tokenizer) -> None:
    override = "{{ bos_token }}[INST] {{ messages[0]['content'] }} [/INST] {{ messages[1]['content'] }}"
    encoded = _encoder(tokenizer, template=override).encode(["r1"], ["Hello"], ["World"])
    assert tokenizer.decode(encoded.row(0).tolist()) == f"{BOS}[INST] Hello [/INST] World"


def test_missing_chat_template_is_an_error(tokenizer) -> None:
    bare = build_tokenizer()
    bare.chat_template = None
    with pytest.raises(RmevalError, match="no chat template"):
        chat_template_renderer(bare, None, "bare-model")


def test_truncation_prompt_left_keeps_the_prompt_end_and_template(tokenizer) -> None:
    prompt = " ".join(f"word{i}" for i in range(200))
    response = "We study tensor networks."
    full = _encoder(tokenizer).encode(["r"], [prompt], [response])
    cut = _encoder(tokenizer, max_length=60).encode(["r", "short"], [prompt, "Q"], [response, "A"])
    assert cut.truncated.tolist() == [True, False] and not full.truncated[0]
    assert cut.lengths[0] <= 60 and cut.lengths[0] > 40
    text = tokenizer.decode(cut.row(0).tolist())
    assert text.startswith(BOS + "<|start_header_id|>user<|end_header_id|>")
    assert "word199" in text and "word0 " not in text
    assert text.endswith(response + "<|eot_id|>")


def test_truncation_response_right_keeps_the_response_start(tokenizer) -> None:
    response = " ".join(f"token{i}" for i in range(200))
    cut = _encoder(tokenizer, max_length=50, truncation="response-right").encode(["r"], ["Question?"], [response])
    text = tokenizer.decode(cut.row(0).tolist())
    assert cut.truncated[0] and cut.lengths[0] <= 50
    assert "Question?" in text and "token0" in text and "token199" not in text
    assert text.endswith("<|eot_id|>")


def test_prompt_left_falls_back_to_the_response_when_the_prompt_is_too_short(tokenizer) -> None:
    response = " ".join(f"token{i}" for i in range(200))
    cut = _encoder(tokenizer, max_length=50).encode(["r"], ["Q"], [response])
    assert cut.truncated[0] and cut.lengths[0] <= 50
    assert "token0" in tokenizer.decode(cut.row(0).tolist())


def test_impossible_fit_names_the_row(tokenizer) -> None:
    with pytest.raises(RmevalError, match="row id='too-long'.*max_length=5"):
        _encoder(tokenizer, max_length=5).encode(["too-long"], ["Q"], ["A"])


def test_bos_text_is_stripped_before_tokenising(tmp_path) -> None:
    """Non-legacy SentencePiece layout: `<s>[INST]` tokenised as text would give `[`; rmeval gives BOS, `▁[...`."""
    from tokenizer_layouts import MISTRAL_TEMPLATE, save_sentencepiece_tokenizer
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(save_sentencepiece_tokenizer(
        tmp_path / "sp", layout="non-legacy", chat_template=MISTRAL_TEMPLATE))
    encoder = _encoder(tokenizer)
    row = encoder.encode(["r"], ["Write an abstract"], ["We study"]).row(0).tolist()
    expected = tokenizer(tokenizer.apply_chat_template(
        [{"role": "user", "content": "Write an abstract"}, {"role": "assistant", "content": "We study"}],
        tokenize=False).removeprefix("<s>"))["input_ids"]
    assert row == expected and tokenizer.convert_ids_to_tokens(row[1]).startswith("▁")
    assert encoder.describe()["template_writes_bos"] is True


def test_tokenizer_suffix_ids_are_kept() -> None:
    """A tokenizer that appends EOS (add_eos_token) gets it, as `tokenizer(text)` in the authors' code does."""
    from tokenizers.processors import TemplateProcessing

    tokenizer = build_tokenizer()
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"{BOS} $A {tokenizer.eos_token}", special_tokens=[(BOS, bos), (tokenizer.eos_token, eos)])
    row = _encoder(tokenizer, template=NO_BOS_TEMPLATE).encode(["r"], ["Q"], ["A"]).row(0).tolist()
    assert row[0] == bos and row[-1] == eos and row.count(bos) == 1


def test_unused_token_id_avoids_ids_in_rows() -> None:
    import numpy as np
    from rmeval.models.chat import unused_token_id

    rows = np.array([1, 2, 5, 2], dtype=np.int64)
    assert unused_token_id(rows, [2, None, 0], vocab_size=8) == 0  # eos (2) is in the rows
    assert unused_token_id(rows, [2], vocab_size=8) == 7
    with pytest.raises(RmevalError, match="no id is free"):
        unused_token_id(np.arange(3), [0], vocab_size=3)
