"""Okapi BM25 over the documentation's pages, small enough to read in one sitting.

A page is indexed as its title (counted `TITLE_WEIGHT` times, a poor man's BM25F) plus its text. Terms are
lower-case alphanumeric runs, minus a few stop words, with a crude suffix stripper so that "replaces",
"replacing" and "replace" meet; the same function reads queries, so its crudeness is symmetric.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 3

STOP_WORDS = frozenset(
    "a an and are as at be by for from how i in into is it its of on or the this to with you your".split()
)
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    """Strip one common English suffix from words long enough to keep a stem of three letters or more.

    >>> [stem(w) for w in ("replacing", "replaced", "replaces", "slides", "layers", "press", "pressing")]
    ['replac', 'replac', 'replac', 'slid', 'layer', 'press', 'press']
    """
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def terms(text: str) -> list[str]:
    """The index terms of a text, in order.

    >>> terms("Export the image as PNG")
    ['export', 'imag', 'png']
    """
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


@dataclass(frozen=True)
class Document:
    key: str
    title: str
    text: str


class SearchIndex:
    """BM25 scores of documents for a query; `search` returns `(key, score)` pairs, best first."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.keys = [d.key for d in documents]
        self.counts: list[Counter[str]] = []
        for document in documents:
            words = terms(document.title) * TITLE_WEIGHT + terms(document.text)
            self.counts.append(Counter(words))
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(documents)
        self.idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}

    def score(self, index: int, query_terms: Sequence[str]) -> float:
        counts, length = self.counts[index], self.lengths[index]
        total = 0.0
        for term in query_terms:
            tf = counts.get(term, 0)
            if tf:
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / self.average))
                total += self.idf[term] * norm
        return total

    def search(self, query: str, limit: int = 10) -> list[tuple[str, float]]:
        """The best `limit` documents with a positive score; ties keep index order."""
        query_terms = list(dict.fromkeys(terms(query)))
        scored = [(self.score(i, query_terms), i) for i in range(len(self.keys))]
        ranked = sorted((pair for pair in scored if pair[0] > 0), key=lambda pair: (-pair[0], pair[1]))
        return [(self.keys[i], s) for s, i in ranked[:limit]]
