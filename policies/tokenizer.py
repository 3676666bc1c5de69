"""A byte-level BPE tokenizer trained locally on text the caller passes (e.g. every environment's text).

Laptop-scale models are created from configs, never downloaded (docs/design.md §1), so their tokenizer is trained here
with the `tokenizers` library and wrapped as a transformers fast tokenizer. The result behaves like a real checkpoint's:
`save_pretrained` writes `tokenizer.json` + `tokenizer_config.json`, `AutoTokenizer.from_pretrained` loads it back,
and it carries a ChatML-style chat template, so prompts go through `apply_chat_template` exactly as they do for
Qwen2.5 (see `raygent.policies.prompts`).

Conventions (chosen to match Qwen2.5-Instruct, the cluster-scale model family):

- Byte-level with Qwen2's pipeline (NFC normalisation, Qwen2's split regex, see `QWEN2_PRETOKENIZE_REGEX`):
  every string encodes (no unknown token) and `decode(encode(text)) == text` for NFC text (all ASCII is).
- `encode` adds no special tokens; the chat template writes the role markers. `<|bos|>` exists for configs that
  want one but is never inserted automatically.
- The end of an assistant turn is the end of generation: `eos_token` is `<|im_end|>`, so a backend that stops at
  EOS stops at the end of the turn. `<|endoftext|>` marks document ends in plain-text (SFT) data; `<|pad|>` pads.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

PAD_TOKEN = "<|pad|>"
BOS_TOKEN = "<|bos|>"
EOS_TOKEN = "<|im_end|>"
TURN_START_TOKEN = "<|im_start|>"
END_OF_TEXT_TOKEN = "<|endoftext|>"
SPECIAL_TOKENS: tuple[str, ...] = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, TURN_START_TOKEN, END_OF_TEXT_TOKEN)
"""In id order: `<|pad|>` is id 0, `<|bos|>` 1, `<|im_end|>` 2, `<|im_start|>` 3, `<|endoftext|>` 4."""

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""ChatML, as Qwen2.5 writes it (without Qwen's default system prompt): one `<|im_start|>role\\n…<|im_end|>\\n`
block per message, then `<|im_start|>assistant\\n` when a generation prompt is asked for."""

CHAT_CORPUS: tuple[str, ...] = ("system\n", "user\n", "assistant\n")
"""The template's role lines, added to every training corpus (`min_frequency` times) so they become single
tokens. The special tokens themselves are never split, so they need no training text."""

QWEN2_PRETOKENIZE_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
"""Qwen2's pre-tokenization split (one digit per piece). transformers 5 loads any checkpoint whose `model_type` is
`qwen2` with `Qwen2Tokenizer`, which rebuilds the pipeline (NFC, this split, byte-level) around the saved vocabulary
and merges; training with the same pipeline keeps tokenization identical whichever class loads it."""

MIN_VOCAB_SIZE = 256 + len(SPECIAL_TOKENS)
"""The 256 byte symbols plus the special tokens: a vocabulary cannot be smaller."""


def train_tokenizer(corpus: Iterable[str], vocab_size: int = 2048, min_frequency: int = 2) -> PreTrainedTokenizerFast:
    """Trains a byte-level BPE on `corpus` and returns it as a transformers fast tokenizer.

    `vocab_size` is an upper bound: a small corpus may run out of merges first (`len(tokenizer)` is the real
    size; models are sized from it). `min_frequency` is the number of occurrences a pair needs to be merged.
    Training is deterministic for a given corpus and arguments.
    """
    if vocab_size < MIN_VOCAB_SIZE:
        raise ValueError(f"vocab_size must be at least {MIN_VOCAB_SIZE} (256 bytes + special tokens), got {vocab_size}")
    backend = Tokenizer(models.BPE())
    backend.normalizer = normalizers.NFC()
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_with_chat_text(corpus, repeats=min_frequency), trainer=trainer)
    return wrap_tokenizer(backend)


def wrap_tokenizer(backend: Tokenizer) -> PreTrainedTokenizerFast:
    """Wraps a trained `tokenizers.Tokenizer` (with `SPECIAL_TOKENS` in its vocabulary) for transformers."""
    missing = [token for token in SPECIAL_TOKENS if backend.token_to_id(token) is None]
    if missing:
        raise ValueError(f"the tokenizer lacks the special tokens {missing}")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD_TOKEN,
        bos_token=BOS_TOKEN,
        eos_token=EOS_TOKEN,
        additional_special_tokens=[TURN_START_TOKEN, END_OF_TEXT_TOKEN],
        clean_up_tokenization_spaces=False,
        model_max_length=1_000_000,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tokenizer(
    corpus: Iterable[str], directory: str | Path, vocab_size: int = 2048, min_frequency: int = 2
) -> PreTrainedTokenizerFast:
    """`train_tokenizer` and `save_pretrained` into `directory` (created if needed); returns the tokenizer."""
    tokenizer = train_tokenizer(corpus, vocab_size=vocab_size, min_frequency=min_frequency)
    Path(directory).mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(directory))
    return tokenizer


def _with_chat_text(corpus: Iterable[str], repeats: int) -> Iterable[str]:
    for _ in range(max(1, repeats)):
        yield from CHAT_CORPUS
    for text in corpus:
        if not isinstance(text, str):
            raise TypeError(f"the corpus must yield strings, got {type(text).__name__}")
        yield text
