"""The FactGuard world: a fixed fact-check corpus and a generator of synthetic short "videos" with claims.

A *video item* is a short clip described symbolically: `frames` (one descriptor per second: a scene word and a
forensic flag, `intact` or `spliced`), a `transcript` line, a `claim` and a `label` (`real` or `fake`). Each item is
of one of three kinds, by the evidence its label needs:

| kind    | claim (example)                        | what decides it                                              |
|---------|----------------------------------------|--------------------------------------------------------------|
| `claim` | `garlic cures flu in one day`          | the claim alone: a hoax template (fake) or an everyday scene |
| `clip`  | `footage at 5s shows a flood in brela` | the frame at 5 s, spliced (fake) or intact: `analyze_clip`   |
| `kb`    | `brela mayor is ana voss`              | a fact-check article in the corpus: `retrieve`               |

The corpus (`build_world`) is a function of `world_seed` alone: for every (place, role) pair one person truly holds
the role; the corpus holds two fact-check articles per pair (the true holder, rated true; one other person, rated
false) and one news distractor per pair that names the place, the role and a first name. `kb` items claim
exactly the fact-checked statements, so `retrieve` on the claim's words finds the article with the rating.

Splits partition the item parameters, as in ToolCalc: an item is `heldout` when the CRC-32 of its canonical key (the
kind and the claim) falls in one residue class of `HELDOUT_MODULUS`, else `train`; the video's noise (transcript,
other frames) does not enter the key, so no held-out claim is ever trained on.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

ENV_ID = "raygent/FactGuard-v0"
"""The gymnasium id of the FactGuard environment, also every FactGuard task's `Task.env`."""

KINDS: tuple[str, ...] = ("claim", "clip", "kb")
LABELS: tuple[str, ...] = ("real", "fake")
SPLITS: tuple[str, ...] = ("train", "heldout")
HELDOUT_MODULUS = 5
DEFAULT_MIX: dict[str, float] = {"claim": 0.4, "clip": 0.3, "kb": 0.3}
DEFAULT_FRAMES = 8

PLACES = ("brela", "ostin", "varno", "kelda", "miron", "tasca", "dunmore", "pellan", "ravik", "solby")
ROLES = ("mayor", "coach", "judge", "doctor", "chief")
PEOPLE = ("ana voss", "ivo kern", "lea brandt", "tom hale", "mira quist", "omar fenn", "zoe lark", "ben oduya")
REMEDIES = ("garlic", "lemon", "salt water", "onion", "honey", "vinegar", "ginger")
DISEASES = ("flu", "cancer", "diabetes", "malaria", "asthma")
CREATURES = ("lizard", "robot", "ghost", "vampire", "clone")
EVERYDAY = ("fans celebrate", "rain falls", "kids play", "a market opens", "traffic slows", "a choir sings")
EVENTS = ("a flood", "a fire", "a storm", "a crowd", "a protest", "a crash")
TRANSCRIPTS = ("filmed today", "watch till the end", "share this now", "breaking news", "no comment", "sent to me")
NEUTRAL_SCENES = ("street", "sky", "room", "road", "field")


def split_of(key: str) -> str:
    """`heldout` or `train`: a fixed, seed-independent partition of item keys."""
    return "heldout" if zlib.crc32(key.encode()) % HELDOUT_MODULUS == 0 else "train"


@dataclass(frozen=True)
class Article:
    """One corpus document: a fact-check article (`rating` real/fake) or a news distractor (`rating` None)."""

    doc_id: str
    text: str
    claim: str | None = None
    rating: str | None = None


@dataclass(frozen=True)
class World:
    """The fact-check corpus and the truths behind it (a function of `seed`)."""

    seed: int
    holders: Mapping[tuple[str, str], str]
    articles: tuple[Article, ...]

    def checked_claims(self) -> list[Article]:
        """The fact-check articles, in corpus order (each is one `kb` claim)."""
        return [article for article in self.articles if article.claim is not None]


def kb_claim(place: str, role: str, person: str) -> str:
    return f"{place} {role} is {person}"


@lru_cache(maxsize=8)
def build_world(seed: int = 0) -> World:
    """The corpus of world `seed`: two fact-check articles per (place, role) and one news distractor per pair."""
    rng = np.random.default_rng(zlib.crc32(f"factguard-world:{seed}".encode()))
    holders: dict[tuple[str, str], str] = {}
    articles: list[Article] = []
    for place in PLACES:
        for role in ROLES:
            holder = PEOPLE[int(rng.integers(len(PEOPLE)))]
            other = PEOPLE[(PEOPLE.index(holder) + 1 + int(rng.integers(len(PEOPLE) - 1))) % len(PEOPLE)]
            holders[(place, role)] = holder
            for person, rating in ((holder, "real"), (other, "fake")):
                claim = kb_claim(place, role, person)
                verdict = "true" if rating == "real" else "false"
                text = f"fact check: {claim}: {verdict}"
                articles.append(Article(f"fc-{len(articles)}", text, claim=claim, rating=rating))
            visitor = PEOPLE[int(rng.integers(len(PEOPLE)))]
            articles.append(Article(f"news-{len(articles)}", f"news: the {place} {role} met {visitor.split()[0]}"))
    return World(seed=seed, holders=holders, articles=tuple(articles))


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def _claim_item(rng: np.random.Generator, label: str) -> tuple[str, dict[str, Any]]:
    if label == "fake":
        if rng.random() < 0.5:
            return f"{_pick(rng, REMEDIES)} cures {_pick(rng, DISEASES)} in one day", {}
        return f"{_pick(rng, PEOPLE)} is secretly a {_pick(rng, CREATURES)}", {}
    return f"{_pick(rng, EVERYDAY)} in {_pick(rng, PLACES)}", {}


def _clip_item(rng: np.random.Generator, label: str, n_frames: int) -> tuple[str, dict[str, Any]]:
    second = int(rng.integers(n_frames))
    event = _pick(rng, EVENTS)
    claim = f"footage at {second}s shows {event} in {_pick(rng, PLACES)}"
    return claim, {"second": second, "event": event.split()[-1]}


def _kb_item(rng: np.random.Generator, label: str, world: World) -> tuple[str, dict[str, Any]]:
    rated = [a for a in world.checked_claims() if a.rating == label]
    article = rated[int(rng.integers(len(rated)))]
    assert article.claim is not None
    return article.claim, {"article": article.doc_id}


def frames_of(rng: np.random.Generator, n_frames: int, kind: str, label: str, extra: Mapping[str, Any]) -> list[str]:
    """One descriptor per second, `"<scene> <intact|spliced>"`: a `clip` item's claimed second shows its event,
    spliced when the item is fake; every other frame (and every frame of other kinds) is an intact neutral scene."""
    frames = [f"{_pick(rng, NEUTRAL_SCENES)} intact" for _ in range(n_frames)]
    if kind == "clip":
        frames[int(extra["second"])] = f"{extra['event']} {'spliced' if label == 'fake' else 'intact'}"
    return frames


def generate_item(
    rng: np.random.Generator, kind: str, label: str, n_frames: int = DEFAULT_FRAMES, world_seed: int = 0
) -> dict[str, Any]:
    """One item's parameters (the `Task.params` of a FactGuard task, less the run's settings)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    if label not in LABELS:
        raise ValueError(f"unknown label {label!r}; expected one of {LABELS}")
    if kind == "claim":
        claim, extra = _claim_item(rng, label)
    elif kind == "clip":
        claim, extra = _clip_item(rng, label, n_frames)
    else:
        claim, extra = _kb_item(rng, label, build_world(world_seed))
    return {
        "kind": kind,
        "label": label,
        "claim": claim,
        "transcript": _pick(rng, TRANSCRIPTS),
        "frames": frames_of(rng, n_frames, kind, label, extra),
        "world_seed": world_seed,
        "key": f"{kind}:{claim}",
        **extra,
    }
