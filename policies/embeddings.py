"""Sentence embeddings: texts to unit vectors, for retrieval (DocOS's dense and hybrid documentation search).

One protocol, `SentenceEmbedder.embed(texts) -> np.ndarray` (n × d float32, every row of unit L2 norm, so a dot
product is the cosine), and two implementations, chosen by `make_embedder(name)`:

- `wordllama` (laptop scale, the default): WordLlama's `l2_supercat` model at 256 dimensions, a table of token
  embeddings (LLaMA-2's 32 000-token vocabulary) trained for sentence similarity from the concatenated input
  embeddings of several large models that share that tokenizer; a sentence is the mean of its tokens' rows. Its
  weights (16 MB, float16) and tokenizer ship inside the `wordllama` wheel on PyPI (MIT), which `scripts/setup.sh`
  installs without its dependencies. The files are found through the package's installed metadata and read here
  (`tokenizers`, `safetensors`); the package is never imported (its `WordLlama.load()` looks for the tokenizer
  in a folder the wheel does not ship and then tries to download it, and importing it configures the root
  logger). Published MTEB scores of this model: STS 66.9 and reranking 52.7, against all-MiniLM-L6-v2's 78.9
  and 58.0: a weak embedder, but a real one that runs in microseconds a sentence on a laptop.
- a model directory (cluster scale): any transformers encoder checkpoint (a sentence-transformers model such as
  all-MiniLM-L6-v2 or bge-small, downloaded beforehand), mean-pooled over the attention mask.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from raygent.policies.cache import distribution_file

WORDLLAMA = "wordllama"
WORDLLAMA_DISTRIBUTION = "wordllama"
WORDLLAMA_WEIGHTS = "l2_supercat_256.safetensors"
WORDLLAMA_TOKENIZER = "l2_supercat_tokenizer_config.json"


class EmbedderError(ValueError):
    """An embedding model cannot be found or loaded."""


@runtime_checkable
class SentenceEmbedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """`len(texts)` × `dim` float32 rows of unit norm (an empty text gives a zero row)."""
        ...


def _normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _shipped_file(name: str) -> Path:
    try:
        return distribution_file(WORDLLAMA_DISTRIBUTION, name, "the wordllama embedder")
    except FileNotFoundError as exc:
        raise EmbedderError(str(exc)) from None


class WordLlamaEmbedder:
    """WordLlama `l2_supercat` 256-d (module docstring): mean of the tokens' embedding rows, L2-normalised."""

    name = WORDLLAMA

    def __init__(self) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(_shipped_file(WORDLLAMA_TOKENIZER)))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        with safe_open(str(_shipped_file(WORDLLAMA_WEIGHTS)), framework="np") as f:
            self.table = np.ascontiguousarray(f.get_tensor("embedding.weight").astype(np.float32))
        self.dim = int(self.table.shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, len(self.table) - 1)
            if len(ids):
                out[row] = self.table[ids].mean(axis=0)
        return _normalize(out)


class TransformersEmbedder:
    """A transformers encoder directory, mean-pooled over the attention mask and L2-normalised."""

    def __init__(self, path: str | Path, max_length: int = 256, batch_size: int = 32) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        if not Path(path).is_dir():
            raise EmbedderError(f"embedder {str(path)!r}: expected {WORDLLAMA!r} or a model directory")
        self.name = str(path)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.tokenizer.padding_side = "right"  # a decoder's hidden states at real tokens ignore right padding
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModel.from_pretrained(str(path), torch_dtype=torch.float32).eval()
        self.dim = int(self.model.config.hidden_size)
        self.max_length, self.batch_size = max_length, batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        import torch

        rows = []
        for start in range(0, len(texts), self.batch_size):
            batch = self.tokenizer(
                list(texts[start : start + self.batch_size]),
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            )
            with torch.no_grad():
                hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            rows.append((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(torch.cat(rows).numpy())


@lru_cache(maxsize=4)
def make_embedder(name: str = WORDLLAMA) -> SentenceEmbedder:
    """`"wordllama"` (the shipped model) or a transformers model directory; one instance per process and name."""
    if name == WORDLLAMA:
        return WordLlamaEmbedder()
    return TransformersEmbedder(name)
