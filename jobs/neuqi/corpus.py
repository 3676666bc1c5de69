"""Text for the tiny LM: a small probabilistic grammar of English-like sentences and a word-level tokenizer.

Laptop-scale stand-in for the paper's corpora (WikiText-2 and C4 calibration/evaluation text): no text can be
downloaded, so the project generates it. The grammar has number agreement (singular/plural subjects and
verbs), recursive noun phrases (adjectives, prepositional phrases, relative clauses) and coordination, so a
2-layer LM has real structure to learn and quantisation noise shows up in perplexity. The tokenizer is a
`tokenizers` WordLevel model wrapped as a `PreTrainedTokenizerFast`, so it is saved next to the model with
`save_pretrained` and read back with `AutoTokenizer.from_pretrained`, the same call a real checkpoint takes.
`read_text` is the paper-scale path: a local text file (e.g. WikiText-2 raw) named in config.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit
from transformers import PreTrainedTokenizerFast

SPECIAL_TOKENS = ("[UNK]", "[PAD]", "<s>", "</s>")

_LEXICON: dict[str, tuple[str, ...]] = {
    "det_sg": ("the", "a", "this", "every", "one"),
    "det_pl": ("the", "some", "these", "many", "two"),
    "noun_sg": ("dog", "cat", "bird", "child", "teacher", "farmer", "robot", "river", "king", "doctor", "horse"),
    "noun_pl": ("dogs", "cats", "birds", "children", "teachers", "farmers", "robots", "rivers", "kings",
                "doctors", "horses"),
    "adj": ("big", "small", "old", "young", "red", "quiet", "happy", "clever", "tired"),
    "prep": ("near", "behind", "with", "under", "beside"),
    "verb_tr_sg": ("sees", "likes", "follows", "finds", "helps", "watches"),
    "verb_tr_pl": ("see", "like", "follow", "find", "help", "watch"),
    "verb_in_sg": ("sleeps", "runs", "sings", "waits", "laughs"),
    "verb_in_pl": ("sleep", "run", "sing", "wait", "laugh"),
    "adverb": ("quickly", "slowly", "today", "again", "quietly"),
}
_FUNCTION_WORDS = ("that", "and", "but", ".")


def vocabulary() -> list[str]:
    """Every word the grammar can emit, specials first, in a fixed order."""
    words = list(SPECIAL_TOKENS)
    for group in (*_LEXICON.values(), _FUNCTION_WORDS):
        words.extend(word for word in group if word not in words)
    return words


class SentenceGrammar:
    """A probabilistic grammar sampled with a numpy Generator; `depth` bounds the recursion."""

    def __init__(self, rng: np.random.Generator, max_depth: int = 3) -> None:
        self.rng = rng
        self.max_depth = max_depth

    def _pick(self, group: str) -> str:
        words = _LEXICON[group]
        return words[int(self.rng.integers(len(words)))]

    def _chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def noun_phrase(self, number: str, depth: int) -> list[str]:
        words = [self._pick(f"det_{number}")]
        while len(words) < 3 and self._chance(0.35):
            words.append(self._pick("adj"))
        words.append(self._pick(f"noun_{number}"))
        if depth < self.max_depth and self._chance(0.25):
            words += [self._pick("prep"), *self.noun_phrase(self._number(), depth + 1)]
        elif depth < self.max_depth and self._chance(0.2):
            words += ["that", *self.verb_phrase(number, depth + 1)]
        return words

    def verb_phrase(self, number: str, depth: int) -> list[str]:
        if self._chance(0.6):
            words = [self._pick(f"verb_tr_{number}"), *self.noun_phrase(self._number(), depth + 1)]
        else:
            words = [self._pick(f"verb_in_{number}")]
        if self._chance(0.3):
            words.append(self._pick("adverb"))
        return words

    def _number(self) -> str:
        return "sg" if self._chance(0.5) else "pl"

    def clause(self, depth: int = 0) -> list[str]:
        number = self._number()
        return [*self.noun_phrase(number, depth), *self.verb_phrase(number, depth)]

    def sentence(self) -> list[str]:
        words = self.clause()
        if self._chance(0.2):
            words += [self._pick_conjunction(), *self.clause(1)]
        return [*words, "."]

    def _pick_conjunction(self) -> str:
        return "and" if self._chance(0.6) else "but"


def generate_text(seed: int | Sequence[int], n_words: int) -> str:
    """At least `n_words` words of grammar text (whole sentences), deterministic in `seed`.

    A sequence seed, e.g. (seed, stream), gives independent streams (train / calibration / evaluation).
    """
    grammar = SentenceGrammar(np.random.default_rng(seed))
    words: list[str] = []
    while len(words) < n_words:
        words += grammar.sentence()
    return " ".join(words)


def build_tokenizer() -> PreTrainedTokenizerFast:
    """The word-level tokenizer over `vocabulary()` (whitespace split, unknown words → [UNK])."""
    vocab = {word: index for index, word in enumerate(vocabulary())}
    core = Tokenizer(WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>"
    )


def read_text(path: str | Path) -> str:
    """A local corpus file (the paper-scale path: WikiText-2 / C4 text exported to plain text)."""
    return Path(path).expanduser().read_text(encoding="utf-8")
