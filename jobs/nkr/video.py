"""Symbolic long "videos", the oracle captioner, the agent's QA synthesis and the held-out question bank.

A video of F frames holds one event every `FRAMES_PER_EVENT` frames on average; an event is an entity (a colour
and an object, unique within the video) doing an action in a place. The oracle captioner (the VLM's dense
description pass) emits one templated caption per event, in time order, with the event's frame number.

Questions come in three kinds, LVBench-style multiple choice with four options:
- `action` (event understanding): what did the red cat do?  → jumps
- `place` (key-information retrieval): where was the red cat? → kitchen
- `after` (event order, compositional over two captions): what came after the red cat? → blue dog

Each kind has two agent templates (what Agentic Knowledge Distillation synthesises from the captions) and one
held-out paraphrase template, never used in distillation: the test asks every fact of the video in the
held-out form, so a correct answer needs the fact stored in the adapter and the question understood in a new
wording. The frozen base model has seen all three wordings while learning to read captions in context.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COLOURS = ("red", "blue", "green", "yellow", "black", "white", "orange", "purple", "grey", "brown")
OBJECTS = ("cat", "dog", "man", "woman", "child", "bird", "car", "truck", "ball", "robot", "horse", "cow", "bike",
           "boat", "drone", "chef", "nurse", "guard", "clown", "monkey")
ACTIONS = ("jumps", "runs", "sits", "falls", "sings", "waves", "dances", "sleeps", "eats", "reads", "climbs", "swims")
PLACES = ("kitchen", "garden", "street", "park", "beach", "office", "hall", "roof", "bridge", "market", "station",
          "forest")
KINDS = ("action", "place", "after")
FRAMES_PER_EVENT = 10
MAX_EVENTS = len(COLOURS) * len(OBJECTS)
OPTIONS = 4

# kind -> (agent template 1, agent template 2, held-out paraphrase); {e} is the entity ("red cat")
TEMPLATES: dict[str, tuple[str, str, str]] = {
    "action": ("what did the {e} do ?", "which action did the {e} perform ?", "the {e} did what ?"),
    "place": ("where was the {e} ?", "in which place was the {e} ?", "the {e} was seen where ?"),
    "after": ("what came after the {e} ?", "who appeared next after the {e} ?", "the {e} was followed by whom ?"),
}
AGENT_FORMS = (0, 1)
HELD_OUT_FORM = 2
PUNCTUATION = (".", "?", ":", "q", "a", "c")


def vocabulary() -> list[str]:
    """Every word the generator, the captioner and the question templates use (special tokens first)."""
    words = ["[PAD]", "[UNK]", "at", "frame", "the", "in", *PUNCTUATION, *COLOURS, *OBJECTS, *ACTIONS, *PLACES,
             *(str(d) for d in range(10))]
    for forms in TEMPLATES.values():
        for form in forms:
            words += [w for w in form.split() if w != "{e}"]
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class Event:
    frame: int
    colour: str
    obj: str
    action: str
    place: str

    @property
    def entity(self) -> str:
        return f"{self.colour} {self.obj}"


@dataclass(frozen=True)
class Question:
    kind: str
    form: int
    event: int  # index of the event asked about
    text: str
    options: tuple[str, ...]
    answer: int  # index of the right option


@dataclass(frozen=True)
class Video:
    frames: int
    events: tuple[Event, ...]

    def captions(self) -> list[str]:
        """The oracle captioner's dense descriptions, one per event, in time order (frame number as digits)."""
        return [f"at frame {' '.join(str(e.frame))} the {e.entity} {e.action} in the {e.place} ." for e in self.events]

    def answer(self, kind: str, index: int) -> str | None:
        event = self.events[index]
        if kind == "action":
            return event.action
        if kind == "place":
            return event.place
        return self.events[index + 1].entity if index + 1 < len(self.events) else None

    def facts(self) -> list[tuple[str, int]]:
        """Every (kind, event index) with an answer: the question bank's facts."""
        return [(kind, i) for i in range(len(self.events)) for kind in KINDS if self.answer(kind, i) is not None]


def make_video(rng: np.random.Generator, frames: int) -> Video:
    """A video of `frames` frames: about frames / FRAMES_PER_EVENT events, each entity at most once."""
    n = max(2, min(MAX_EVENTS, round(frames / FRAMES_PER_EVENT)))
    cells = rng.choice(MAX_EVENTS, size=n, replace=False)
    times = np.sort(rng.choice(frames, size=n, replace=False)) if frames >= n else np.arange(n)
    events = tuple(
        Event(int(t), COLOURS[c // len(OBJECTS)], OBJECTS[c % len(OBJECTS)], ACTIONS[int(rng.integers(len(ACTIONS)))],
              PLACES[int(rng.integers(len(PLACES)))])
        for t, c in zip(times, cells, strict=True)
    )
    return Video(frames, events)


def question(video: Video, kind: str, index: int, form: int, rng: np.random.Generator) -> Question:
    """A four-option question about event `index`; distractors are other actions/places, or other entities of
    the same video for `after`."""
    answer = video.answer(kind, index)
    assert answer is not None
    if kind == "action":
        pool = [a for a in ACTIONS if a != answer]
    elif kind == "place":
        pool = [p for p in PLACES if p != answer]
    else:
        pool = [e.entity for e in video.events if e.entity != answer and e.entity != video.events[index].entity]
        if len(pool) < OPTIONS - 1:  # a very short video: entities it does not show make up the rest
            shown = {e.entity for e in video.events}
            pool += [f"{c} {o}" for c in COLOURS for o in OBJECTS if f"{c} {o}" not in shown][: OPTIONS - 1]
    distractors = [pool[i] for i in rng.choice(len(pool), size=OPTIONS - 1, replace=False)]
    position = int(rng.integers(OPTIONS))
    options = [*distractors[:position], answer, *distractors[position:]]
    text = TEMPLATES[kind][form].format(e=video.events[index].entity)
    return Question(kind, form, index, text, tuple(options), position)


def synthesise_qa(video: Video, budget: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    """The agent pass of AKD: up to `budget` distinct (question, answer) pairs from the captions, in the two
    agent wordings, facts drawn at random without repetition (a pair per fact and wording at most)."""
    pairs = [(kind, index, form) for kind, index in video.facts() for form in AGENT_FORMS]
    order = rng.permutation(len(pairs))[:budget]
    out = []
    for j in order:
        kind, index, form = pairs[j]
        answer = video.answer(kind, index)
        assert answer is not None
        out.append((TEMPLATES[kind][form].format(e=video.events[index].entity), answer))
    return out


def question_bank(video: Video, form: int, rng: np.random.Generator) -> list[Question]:
    """Every fact of the video asked once in wording `form` (the test uses `HELD_OUT_FORM`)."""
    return [question(video, kind, index, form, rng) for kind, index in video.facts()]


def reading_example(rng: np.random.Generator, max_events: int) -> tuple[list[str], Question, Video]:
    """One generic pre-training item for the base model: a short video's captions and a question about it in
    any of the three wordings (the base learns to read captions in context, not any particular video)."""
    n = int(rng.integers(2, max_events + 1))
    video = make_video(rng, n * FRAMES_PER_EVENT)
    kind, index = video.facts()[int(rng.integers(len(video.facts())))]
    form = int(rng.integers(len(TEMPLATES[kind])))
    return video.captions(), question(video, kind, index, form, rng), video
