"""The weak expert, the generalist stand-in, EDA, and the query-based collaboration loop.

- `Expert`: the domain-focused weak expert. It reads text only: a dictionary of every surface form (longest match
  first), a dose or value right after a drug or vital, and NegEx-style negation (a cue opening the sentence). It
  returns the normalised concept set C(x).
- `Generalist`: the laptop stand-in for the strong generalist LLM, a stochastic paraphraser with the LLM failure
  modes at a rate set by its `temperature` t: it swaps surface forms for synonyms, paraphrases connectors,
  reorders sentences and adds or drops filler (label-preserving), and per critical mention drops it (p = t),
  changes its value or dose or substitutes another drug (p = t / 2), loses a negation (p = t / 2 per negated
  sentence), and per note invents a plausible extra diagnosis or drug (p = t, from the corpus' prior).
  `rewrite(note, rng, constraint=True)` (the expert's entity list in the prompt) lowers the failure rates by
  `CONSTRAINT_FACTOR`, as a constrained prompt does for an LLM.
- `eda`: Easy Data Augmentation (synonym replacement of non-clinical words, random insertion, swap, deletion at
  rate alpha) on the text; it knows nothing of entities.
- `augment(..., method="collab")`: expert query → constrained rewrite → verify (missing = C(x) \\ C(x'),
  hallucinated = C(x') \\ C(x)) → up to `rounds` re-queries of the generalist on the offending sentences with
  the diff → keep x' only if nothing is missing or hallucinated.

`scale: paper` replaces `Generalist` with an instruction LLM from a local path and `Expert` with a clinical NER;
both are selected by `module:attr` in the study config (`generalist`, `expert`), with the same methods.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from raygent.jobs.clinical_aug.notes import (
    DIAGNOSES,
    DRUG_PRIOR,
    DRUGS,
    DX_PRIOR,
    FILLER,
    NEGATION_CUES,
    PHRASES,
    VITALS,
    Mention,
    Note,
    Sentence,
)

Concept = tuple[str, str, int | None, bool]
CONSTRAINT_FACTOR = 0.5
EDA_SYNONYMS = {"patient": "pt", "today": "this day", "overnight": "through the night", "plan": "approach",
                "with": "alongside", "on": "upon", "for": "regarding", "and": "plus", "home": "house",
                "regular": "normal", "current": "present", "discussed": "talked over", "seen": "evaluated"}


@dataclass
class Expert:
    """Dictionary + regex extractor with NegEx-style negation; text in, normalised concepts out."""

    lexicon: dict[str, tuple[str, str]] = field(default_factory=dict)
    pattern: re.Pattern[str] = field(default_factory=lambda: re.compile("$^"))

    def __post_init__(self) -> None:
        for concept, forms in DIAGNOSES.items():
            self.lexicon.update({form: ("dx", concept) for form in forms})
        for concept, (_, forms, _) in DRUGS.items():
            self.lexicon.update({form: ("drug", concept) for form in forms})
        for concept, (forms, _) in VITALS.items():
            self.lexicon.update({form: ("vital", concept) for form in forms})
        alternatives = "|".join(re.escape(f) for f in sorted(self.lexicon, key=len, reverse=True))  # longest first
        self.pattern = re.compile(rf"\b({alternatives})\b(?:\s+(\d+)(?:\s+mg)?)?")

    def extract(self, text: str) -> set[Concept]:
        concepts: set[Concept] = set()
        for sentence in re.split(r"(?<=\.)\s+", text):
            negated = any(sentence.startswith(cue + " ") for cue in NEGATION_CUES)
            for match in self.pattern.finditer(sentence):
                kind, concept = self.lexicon[match.group(1)]
                value: int | None = int(match.group(2)) if match.group(2) and kind != "dx" else None
                if kind == "drug" and value is None:
                    value = 0
                concepts.add((kind, concept, value, negated and kind == "dx"))
        return concepts


@dataclass(frozen=True)
class Generalist:
    """The stochastic paraphraser standing in for the generalist LLM (module docstring)."""

    temperature: float

    def rewrite(self, note: Note, rng: np.random.Generator, constraint: bool = False) -> Note:
        t = self.temperature * (CONSTRAINT_FACTOR if constraint else 1.0)
        sentences = [self._sentence(s, rng, t) for s in note.sentences]
        sentences = [s for s in sentences if any(isinstance(p, Mention) for p in s) or _is_prose(s)]
        head, rest = sentences[:1], sentences[1:]
        order = rng.permutation(len(rest))
        sentences = head + [rest[i] for i in order]
        fillers = [i for i, s in enumerate(sentences) if s and s[0] in FILLER]
        if fillers and rng.random() < 0.3:
            sentences.pop(int(rng.choice(fillers)))
        if rng.random() < 0.3:
            sentences.insert(int(rng.integers(1, len(sentences) + 1)), (FILLER[int(rng.integers(len(FILLER)))],))
        if rng.random() < t:
            sentences.insert(int(rng.integers(1, len(sentences) + 1)), _invented(note, rng))
        return replace(note, sentences=tuple(sentences))

    def repair(self, note: Note, original: Note, missing: set[Concept], hallucinated: set[Concept],
               rng: np.random.Generator) -> Note:
        """Re-query with the diff: sentences holding a hallucinated concept are rewritten from the original's
        sentences that hold the missing ones (constrained, so they can fail again at a lower rate)."""
        kept = [s for s in note.sentences if not any(isinstance(p, Mention) and p.key() in hallucinated for p in s)]
        redo = [s for s in original.sentences if any(isinstance(p, Mention) and p.key() in missing for p in s)]
        t = self.temperature * CONSTRAINT_FACTOR
        for s in redo:
            kept.insert(int(rng.integers(1, len(kept) + 1)), self._sentence(s, rng, t))
        return replace(note, sentences=tuple(kept))

    def _sentence(self, sentence: Sentence, rng: np.random.Generator, t: float) -> Sentence:
        parts: list[str | Mention] = []
        if sentence and sentence[0] in NEGATION_CUES and rng.random() < t / 2:  # the negation is lost
            sentence = ("also has", *(replace(p, negated=False) if isinstance(p, Mention) else p
                                      for p in sentence[1:]))
        for part in sentence:
            if isinstance(part, str):
                options = PHRASES.get(part)
                parts.append(options[int(rng.integers(len(options)))] if options else part)
                continue
            if rng.random() < t:  # dropped
                if parts and parts[-1] == ",":
                    parts.pop()
                continue
            mention = replace(part, surface=int(rng.integers(part.forms())))
            if rng.random() < t / 2:
                mention = _swapped(mention, rng)
            parts.append(mention)
        while parts and parts[-1] == ",":
            parts.pop()
        if parts and parts[-1] != "." and any(isinstance(p, Mention) for p in parts):
            parts.append(".")
        if len(parts) >= 2 and parts[-2] == ",":
            del parts[-2]
        return tuple(parts)


def _is_prose(sentence: Sentence) -> bool:
    return len(sentence) > 0 and isinstance(sentence[0], str) and (sentence[0] in FILLER or "year old" in sentence[0])


def _swapped(mention: Mention, rng: np.random.Generator) -> Mention:
    """A changed value or dose, or (half the drugs) another drug of any class."""
    if mention.kind == "drug" and rng.random() < 0.5:
        names = [d for d in DRUGS if d != mention.concept]
        other = names[int(rng.integers(len(names)))]
        return Mention("drug", other, int(rng.choice(DRUGS[other][2])), False, 0)
    if mention.kind == "drug":
        doses = [d for d in DRUGS[mention.concept][2] if d != mention.value] or [int(mention.value or 0) * 2 + 1]
        return replace(mention, value=int(rng.choice(doses)))
    if mention.kind == "vital":
        low, high = VITALS[mention.concept][1]
        value = int(rng.integers(low, high + 1))
        return replace(mention, value=value if value != mention.value else value + 1)
    others = [d for d in DIAGNOSES if d != mention.concept]
    return replace(mention, concept=others[int(rng.integers(len(others)))], surface=0)


def _invented(note: Note, rng: np.random.Generator) -> Sentence:
    """A plausible clinical fact that the source note does not state: drawn from the corpus' own prior (common
    diagnoses and drug classes are the likely inventions, as an LLM's are)."""
    present = {m.concept for m in note.mentions()}
    if rng.random() < 0.5:
        pool = [d for d in DIAGNOSES if d not in present]
        weights = np.array([DX_PRIOR.get(d, 1.0) for d in pool])
        concept = pool[int(rng.choice(len(pool), p=weights / weights.sum()))]
        return ("also has", Mention("dx", concept, None, False, 0), ".")
    pool = [d for d in DRUGS if d not in present]
    weights = np.array([DRUG_PRIOR.get(DRUGS[d][0], 1.0) for d in pool])
    concept = pool[int(rng.choice(len(pool), p=weights / weights.sum()))]
    return ("discharged on", Mention("drug", concept, int(rng.choice(DRUGS[concept][2])), False, 0), ".")


def eda(text: str, rng: np.random.Generator, alpha: float) -> str:
    """EDA: per word, with probability alpha each, synonym replacement, deletion, insertion, and swaps."""
    words = text.split()
    out = []
    for word in words:
        r = rng.random()
        if r < alpha and word in EDA_SYNONYMS:
            out.append(EDA_SYNONYMS[word])
        elif r < 2 * alpha:
            continue  # random deletion
        else:
            out.append(word)
        if rng.random() < alpha / 2 and out:
            out.append(out[int(rng.integers(len(out)))])  # random insertion of a word of the note
    for _ in range(int(alpha * len(out))):
        i, j = rng.integers(len(out), size=2)
        out[i], out[j] = out[j], out[i]
    return " ".join(out)


@dataclass(frozen=True)
class Outcome:
    text: str
    kept: bool
    preservation: float
    concept_hallucination: float
    token_hallucination: float
    rounds: int


def score(source: set[Concept], rewritten: set[Concept], source_text: str, text: str) -> tuple[float, float, float]:
    """(preservation, concept-level hallucination, token-level hallucination) of a rewrite."""
    preservation = len(source & rewritten) / max(1, len(source))
    concept = len(rewritten - source) / max(1, len(rewritten))
    vocabulary = _clinical_words()
    tokens = [w for w in text.split() if w in vocabulary]
    seen = set(source_text.split()) | _surface_words(source)  # a synonym of a source concept is not invented
    token = sum(w not in seen for w in tokens) / max(1, len(tokens))
    return preservation, concept, token


def _surface_words(concepts: set[Concept]) -> set[str]:
    words: set[str] = set()
    for kind, concept, value, _ in concepts:
        if kind == "dx":
            forms: tuple[str, ...] = DIAGNOSES[concept]
        elif kind == "drug":
            forms = DRUGS[concept][1]
        else:
            forms = VITALS[concept][0]
        words.update(w for f in forms for w in f.split())
        if value is not None:
            words.add(str(value))
    return words


_CLINICAL: set[str] = set()


def _clinical_words() -> set[str]:
    """The medical vocabulary: every word of every surface form, and every number (values and doses)."""
    if not _CLINICAL:
        for forms in DIAGNOSES.values():
            _CLINICAL.update(w for f in forms for w in f.split())
        for _, forms, _ in DRUGS.values():
            _CLINICAL.update(w for f in forms for w in f.split())
        for forms, _ in VITALS.values():
            _CLINICAL.update(w for f in forms for w in f.split())
        _CLINICAL.update(str(n) for n in range(0, 5001))
    return _CLINICAL


def augment(note: Note, method: str, generalist: Generalist, expert: Expert, rng: np.random.Generator,
            rounds: int, eda_alpha: float) -> Outcome:
    """One augmented variant of `note` by `method` (eda | llm | collab); metrics against the ground truth."""
    source = note.concepts()
    if method == "eda":
        text = eda(note.text(), rng, eda_alpha)
        found = expert.extract(text)  # EDA text has no tags: the truth is what survives of the source's mentions
        p, c, t = score(source, found, note.text(), text)
        return Outcome(text, True, p, c, t, 0)
    if method == "llm":
        variant = generalist.rewrite(note, rng)
        p, c, t = score(source, variant.concepts(), note.text(), variant.text())
        return Outcome(variant.text(), True, p, c, t, 0)
    if method != "collab":
        raise ValueError(f"unknown method {method!r}")
    queried = expert.extract(note.text())  # the expert query C(x)
    variant = generalist.rewrite(note, rng, constraint=True)
    used = 0
    while True:
        found = expert.extract(variant.text())
        missing, hallucinated = queried - found, found - queried
        if (not missing and not hallucinated) or used >= rounds:
            break
        variant = generalist.repair(variant, note, missing, hallucinated, rng)
        used += 1
    kept = not missing and not hallucinated
    p, c, t = score(source, variant.concepts(), note.text(), variant.text())
    return Outcome(variant.text(), kept, p, c, t, used)
