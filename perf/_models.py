"""Benchmark inputs: real arXiv abstracts and a locally built ~30M-parameter Llama-style reward model.

The model is a real transformers checkpoint (`LlamaForSequenceClassification`, saved with
`save_pretrained`, loaded with `from_pretrained`) with a byte-level BPE tokenizer of 32k vocabulary
trained here on the same abstracts, and a Llama-3-style chat template. Weights are random but seeded:
throughput and numerical agreement do not depend on what the model learned. Built models are cached
under a key of (corpus hash, settings) so repeated benchmark runs skip the build.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import asdict, dataclass
from pathlib import Path

from rmeval.benchmarks.fairness.task import FAIRNESS_PROMPT
from rmeval.testing.tiny_model import BOS, END_HEADER, EOS, EOT, LLAMA3_STYLE_TEMPLATE, PAD, START_HEADER

REPO_ROOT = Path(__file__).resolve().parents[1]
ABSTRACTS_FILE = "arxiv/arxiv_balanced_by_archive_max500.jsonl"


@dataclass(frozen=True)
class BenchModelSettings:
    """About 30M parameters: 16.4M in the embedding, 11.8M in four decoder layers."""

    vocab_size: int = 32000
    hidden_size: int = 512
    intermediate_size: int = 1408
    num_hidden_layers: int = 4
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    max_position_embeddings: int = 2048
    seed: int = 0


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    abstract: str
    group: str


def shared_data_dir() -> Path | None:
    """`$RMEVAL_SHARED_DATA`, else `../shared/data` beside the repository (as tests/conftest.py)."""
    for candidate in (os.environ.get("RMEVAL_SHARED_DATA"), REPO_ROOT.parent / "shared" / "data"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def default_abstracts_path() -> Path | None:
    root = shared_data_dir()
    if root is None or not (root / ABSTRACTS_FILE).is_file():
        return None
    return root / ABSTRACTS_FILE


def read_papers(path: Path) -> list[Paper]:
    papers: list[Paper] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            title, abstract = row.get("title"), row.get("abstract")
            if isinstance(title, str) and title.strip() and isinstance(abstract, str) and abstract.strip():
                papers.append(Paper(str(row["id"]), title, abstract, str(row.get("archive_group", ""))))
    return papers


def sample_papers(papers: list[Paper], count: int, seed: int = 0) -> list[Paper]:
    """A seeded sample that keeps file order (grouped by discipline, like the paper's per-group files)."""
    if count >= len(papers):
        return list(papers)
    chosen = sorted(random.Random(seed).sample(range(len(papers)), count))
    return [papers[index] for index in chosen]


def chat_messages(paper: Paper) -> list[dict[str, str]]:
    """Song et al. (2025)'s prompt with the abstract as the assistant's answer (as the fairness task builds it)."""
    prompt = FAIRNESS_PROMPT.format(title=" ".join(paper.title.split()))
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": paper.abstract.strip()}]


def _cache_key(corpus: Path, settings: BenchModelSettings) -> str:
    digest = hashlib.sha256(corpus.read_bytes())
    digest.update(json.dumps(asdict(settings), sort_keys=True).encode())
    return digest.hexdigest()[:16]


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rmeval" / "bench-models"


def train_tokenizer(papers: list[Paper], vocab_size: int):
    """Byte-level BPE trained on titles and abstracts, with Llama-3's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[BOS, EOS, PAD, START_HEADER, END_HEADER, EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = [text for paper in papers for text in (paper.title, paper.abstract)]
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        additional_special_tokens=[START_HEADER, END_HEADER, EOT],
    )
    # The template writes BOS itself and the tokenizer adds none, so no input has a duplicated BOS.
    fast.chat_template = LLAMA3_STYLE_TEMPLATE
    return fast


def build_model(outdir: Path, papers: list[Paper], settings: BenchModelSettings) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    tokenizer = train_tokenizer(papers, settings.vocab_size)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=settings.hidden_size,
        intermediate_size=settings.intermediate_size,
        num_hidden_layers=settings.num_hidden_layers,
        num_attention_heads=settings.num_attention_heads,
        num_key_value_heads=settings.num_key_value_heads,
        max_position_embeddings=settings.max_position_embeddings,
        num_labels=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(settings.seed)
    model = LlamaForSequenceClassification(config).eval()
    tmp = outdir.with_name(outdir.name + ".tmp")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / "rmeval_bench.json").write_text(json.dumps({"settings": asdict(settings)}, indent=2) + "\n")
    os.replace(tmp, outdir)  # atomic: a killed build never leaves a directory that looks complete
    return outdir


def ensure_model(corpus: Path, cache_root: Path | None = None,
                 settings: BenchModelSettings = BenchModelSettings()) -> Path:
    """The cached model directory for (corpus, settings), built on first use."""
    root = cache_root or default_cache_root()
    outdir = root / f"llama-rm-30m-{_cache_key(corpus, settings)}"
    if (outdir / "rmeval_bench.json").is_file():
        return outdir
    root.mkdir(parents=True, exist_ok=True)
    stale = outdir.with_name(outdir.name + ".tmp")
    if stale.exists():
        import shutil

        shutil.rmtree(stale)
    return build_model(outdir, read_papers(corpus), settings)
