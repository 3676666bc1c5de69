"""Text for the tiny LM: a small probabilistic grammar of English-like sentences and a word-level tokenizer.

Laptop-scale stand-in for the paper's corpora (WikiText-2 and C4 calibration/evaluation text): no text can be
downloaded, so the project generates it. The grammar has number agreement (singular/plural subjects and
verbs), recursive noun phrases (adjectives, prepositional phrases, relative clauses), coordination and fixed
selectional preferences (which verbs and adjectives go with which noun), so a 2-layer LM has real structure
to learn and quantisation noise shows up in perplexity. The tokenizer is a
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

# Regular stems: plural nouns and singular verbs add "s".
_NOUNS = (
    "dog", "cat", "bird", "farmer", "robot", "river", "king", "doctor", "horse", "pilot", "baker", "singer",
    "tiger", "rabbit", "student", "sailor", "painter", "lawyer", "monkey", "dragon", "wizard", "knight", "queen",
    "driver", "writer", "hunter", "artist", "parrot", "donkey", "camel", "spider", "eagle", "friend", "cousin",
    "neighbor", "captain", "soldier", "teacher", "nurse", "chef", "clerk", "guard", "miner", "farmhand",
)
_ADJECTIVES = (
    "big", "small", "old", "young", "red", "quiet", "happy", "clever", "tired", "brave", "lazy", "angry",
    "gentle", "noisy", "proud", "shy", "calm", "famous", "hungry", "rich",
)
_TRANSITIVE = ("see", "like", "follow", "find", "help", "watch", "visit", "call", "thank", "greet", "trust", "chase")
_INTRANSITIVE = ("sleep", "run", "sing", "wait", "laugh", "dance", "shout", "rest", "smile", "travel")
_CLOSED: dict[str, tuple[str, ...]] = {
    "det_sg": ("the", "a", "this", "every", "one"),
    "det_pl": ("the", "some", "these", "many", "two"),
    "prep": ("near", "behind", "with", "under", "beside"),
    "adverb": ("quickly", "slowly", "today", "again", "quietly"),
}
_FUNCTION_WORDS = ("that", "and", "but", ".")
_OPEN_CLASSES: dict[str, tuple[str, ...]] = {
    "noun": _NOUNS, "adj": _ADJECTIVES, "verb_tr": _TRANSITIVE, "verb_in": _INTRANSITIVE,
}


def _inflect(stem: str, plural_noun_or_singular_verb: bool) -> str:
    return stem + "s" if plural_noun_or_singular_verb else stem


def vocabulary() -> list[str]:
    """Every word the grammar can emit, specials first, in a fixed order."""
    words = list(SPECIAL_TOKENS)
    groups = [
        *_CLOSED.values(), _FUNCTION_WORDS, _ADJECTIVES, _NOUNS, tuple(n + "s" for n in _NOUNS),
        _TRANSITIVE, tuple(v + "s" for v in _TRANSITIVE), _INTRANSITIVE, tuple(v + "s" for v in _INTRANSITIVE),
    ]
    for group in groups:
        words.extend(word for word in group if word not in words)
    return words


def _preferences(seed: int = 2505) -> dict[str, dict[str, tuple[str, ...]]]:
    """Fixed selectional preferences (the same for every trial): each noun's usual adjectives and verbs,
    each transitive verb's usual objects. Drawn once from a constant seed."""
    rng = np.random.default_rng(seed)

    def some(words: tuple[str, ...], k: int) -> tuple[str, ...]:
        return tuple(words[i] for i in rng.choice(len(words), k, replace=False))

    table: dict[str, dict[str, tuple[str, ...]]] = {}
    for noun in _NOUNS:
        table[noun] = {"adj": some(_ADJECTIVES, 2), "verb_tr": some(_TRANSITIVE, 2), "verb_in": some(_INTRANSITIVE, 2)}
    for verb in _TRANSITIVE:
        table[verb] = {"noun": some(_NOUNS, 3)}
    return table


_PREFERENCES = _preferences()


class SentenceGrammar:
    """A probabilistic grammar of documents, sampled with a numpy Generator.

    Besides agreement and recursion, words follow fixed selectional preferences with probability
    `preference`: a noun's adjective and its verb (also in relative clauses, across intervening phrases) and a
    verb's object come from small per-word lists. Predicting them needs associations stored in the weights
    and attention back to the head noun, which is what makes the LM's linear layers, and their
    quantisation, matter for perplexity. `max_depth` bounds the recursion of noun phrases.
    """

    def __init__(self, rng: np.random.Generator, preference: float = 0.9, max_depth: int = 2) -> None:
        self.rng = rng
        self.preference = preference
        self.max_depth = max_depth

    def _choose(self, words: tuple[str, ...]) -> str:
        return words[int(self.rng.integers(len(words)))]

    def _chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def _open(self, name: str, head: str | None) -> str:
        """An open-class word, from `head`'s preferences with probability `preference`."""
        if head is not None and self._chance(self.preference):
            return self._choose(_PREFERENCES[head][name])
        return self._choose(_OPEN_CLASSES[name])

    def noun_phrase(self, plural: bool, depth: int, governor: str | None = None) -> tuple[list[str], str]:
        noun = self._open("noun", governor)
        words = [self._choose(_CLOSED["det_pl" if plural else "det_sg"])]
        if self._chance(0.4):
            words.append(self._open("adj", noun))
        words.append(_inflect(noun, plural))
        if depth < self.max_depth and self._chance(0.25):
            words += [self._choose(_CLOSED["prep"]), *self.noun_phrase(self._chance(0.5), depth + 1)[0]]
        elif depth < self.max_depth and self._chance(0.2):
            words += ["that", *self.verb_phrase(plural, depth + 1, noun)]
        return words, noun

    def verb_phrase(self, plural: bool, depth: int, subject: str) -> list[str]:
        if self._chance(0.6):
            verb = self._open("verb_tr", subject)
            words = [_inflect(verb, not plural), *self.noun_phrase(self._chance(0.5), depth + 1, verb)[0]]
        else:
            words = [_inflect(self._open("verb_in", subject), not plural)]
        if self._chance(0.3):
            words.append(self._choose(_CLOSED["adverb"]))
        return words

    def clause(self, depth: int = 0) -> list[str]:
        plural = self._chance(0.5)
        subject, noun = self.noun_phrase(plural, depth)
        return [*subject, *self.verb_phrase(plural, depth, noun)]

    def sentence(self) -> list[str]:
        words = self.clause()
        if self._chance(0.2):
            words += ["and" if self._chance(0.6) else "but", *self.clause(1)]
        return [*words, "."]


def generate_text(seed: int | Sequence[int], n_words: int, preference: float = 0.9) -> str:
    """At least `n_words` words of grammar text (whole sentences), deterministic in `seed`.

    A sequence seed, e.g. (seed, stream), gives independent streams (train / calibration / evaluation).
    """
    grammar = SentenceGrammar(np.random.default_rng(seed), preference)
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
