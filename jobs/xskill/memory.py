"""XSkill's knowledge base: an experience library, a skill library, a BM25 index, the knowledge operations,
consolidation, and snapshots.

- **Experiences** are short tactical tips tied to a situation, as in XSkill's `experiences.json` (`E0`, `E1`, ...:
  "When ...: <advice>", at most `MAX_WORDS` words). A situation is the task's instruction with its parameters (its
  numbers, file names, and the names it quotes) replaced by placeholders in order of appearance (`What is 37*12+5?`
  → `What is A*B+C?`, `Make the word "Brake" bold.` → `Make the word "A" bold.`): what recurs across tasks of one
  kind, with the parameters that do not.
- **Skills** are task-level procedures, one per situation, rendered as XSkill's `SKILL.md` sections (front matter,
  When to use, Workflow, Watch out for). A skill keeps every procedure variant that succeeded with its count (at most
  `MAX_VARIANTS`); its workflow is the majority variant once it holds `skill_share` of the successes.
- **Index**: `rank_bm25.BM25Okapi` over unigram and bigram tokens of each item's situation and text (bigrams make
  `A*B+C` and `A+B*C` different documents). Retrieval is the top `k` experiences for a query whose situation
  shares `min_overlap` of its bigrams with the query's (XSkill keeps every top-k; a tiny model is misled by tips of
  unrelated tasks); the skill is the
  top-scoring skill whose situation's bigram overlap with the query's is at least `skill_overlap`.
- **Knowledge operations** (`KnowledgeOp`): `add` (an experience close to existing ones of its kind and situation,
  cosine of token counts ≥ `merge_threshold` = XSkill's 0.70, is merged with them instead of appended; merging
  across situations needs a generalising writer, XSkill's LLM, and happens here only under consolidation's size
  pressure), `modify` (replace an item's text or
  a skill's variant counts), `merge` (several items into one) and `delete`.
- **Consolidation** when the library grows past `max_experiences` (XSkill: 120): merge at the looser threshold
  (0.60), then drop the least supported items down to `target_experiences`.
- **Adaptation** at inference (XSkill's rewrite/adapt steps, here programmatic): a retrieved skill's placeholders
  are filled with the current task's numbers and names; a tip for the same situation is shown without its trigger.

Everything here is plain Python (no Ray); `actor.py` serves one `MemoryBank` to all rollout workers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rank_bm25 import BM25Okapi

MAX_WORDS = 64
MAX_VARIANTS = 4
PLACEHOLDERS = "ABCDEFGH"
SNAPSHOT_VERSION = 1
MODES = ("none", "experiences", "skills", "both")
Mode = Literal["none", "experiences", "skills", "both"]

NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
"""A whole number in a text (not part of a word or a decimal): what a situation abstracts."""
QUOTED = re.compile(r'“([^“”]+)”|"([^"]+)"|`([^`]+)`')
"""A name or text the instruction quotes (“…”, "…" or `…`): a situation abstracts what is inside, quotes kept."""
FILE_NAME = re.compile(r"(?<![\w./])([A-Za-z_][\w-]*(?:/[\w-]+)*\.[A-Za-z]{2,5})(?!\w|\.\w)")
"""An unquoted file name (`calc.mini`, `todo.txt`, `lib/tools.mini`; a sentence's full stop may follow it): a
parameter like a quoted name."""
_PARAMETER = re.compile(f"{QUOTED.pattern}|{FILE_NAME.pattern}|{NUMBER.pattern}")
Value = int | str
"""One parameter of a task: a number, a file name, or a quoted name or text."""
_TOKEN = re.compile(r"[a-z]+|\d+|[^\sa-z\d]")


class SnapshotError(RuntimeError):
    """A memory snapshot that cannot be restored; the message names the file."""


def situation_of(instruction: str) -> tuple[str, list[Value]]:
    """The instruction with its parameters replaced by `A`, `B`, ... in order, and the parameters: its whole
    numbers, its file names, and what it quotes (a quoted text with numbers in it is one parameter; the quotes
    stay).

    >>> situation_of("What is 37*12+5?")
    ('What is A*B+C?', [37, 12, 5])
    >>> situation_of('Set the font size of the word "Clean" to 20 pt.')
    ('Set the font size of the word "A" to B pt.', ['Clean', 20])
    >>> situation_of("Run the program calc.mini.")
    ('Run the program A.', ['calc.mini'])
    """
    values: list[Value] = []

    def replace(match: re.Match[str]) -> str:
        quoted = next((g for g in match.groups() if g is not None), None)
        values.append(int(match.group()) if quoted is None else quoted)
        index = len(values) - 1
        if index >= len(PLACEHOLDERS):
            return match.group()
        return match.group().replace(quoted, PLACEHOLDERS[index]) if quoted else PLACEHOLDERS[index]

    return _PARAMETER.sub(replace, instruction), values


def tokens(text: str) -> list[str]:
    """Lower-cased word, number and symbol tokens, then their bigrams (`a_*`, `*_b`, ...)."""
    unigrams = _TOKEN.findall(text.lower())
    return unigrams + [f"{a}_{b}" for a, b in pairwise(unigrams)]


def cosine(a: str, b: str) -> float:
    """Cosine similarity of two texts' token-count vectors (unigrams and bigrams)."""
    ca, cb = Counter(tokens(a)), Counter(tokens(b))
    dot = sum(ca[t] * cb[t] for t in ca.keys() & cb.keys())
    norm = math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(sum(v * v for v in cb.values()))
    return dot / norm if norm else 0.0


def bigram_overlap(a: str, b: str) -> float:
    """Jaccard overlap of two texts' bigram sets (1.0 for the same situation)."""
    sa = {t for t in tokens(a) if "_" in t}
    sb = {t for t in tokens(b) if "_" in t}
    return len(sa & sb) / len(sa | sb) if sa | sb else float(a.strip() == b.strip())


def clip_words(text: str, limit: int = MAX_WORDS) -> str:
    words = text.split()
    return " ".join(words[:limit])


def instantiate(template: str, values: Sequence[Value]) -> str:
    """A procedure with its placeholders filled by the task's numbers and names (`R`, the last result, stays)."""

    def fill(match: re.Match[str]) -> str:
        index = PLACEHOLDERS.index(match.group())
        return str(values[index]) if index < len(values) else match.group()

    return re.sub(rf"(?<![A-Za-z])[{PLACEHOLDERS[: max(len(values), 1)]}](?![A-Za-z])", fill, template)


class Experience(BaseModel):
    """One tip: `text` starts with its trigger ("When ..."); `advice` is the part after it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    situation: str
    kind: str = "tip"
    advice: str
    support: int = Field(default=1, ge=0)
    uses: int = Field(default=0, ge=0)
    wins: int = Field(default=0, ge=0)

    @property
    def text(self) -> str:
        return clip_words(f"When the task reads '{self.situation}': {self.advice}")


class Skill(BaseModel):
    """One task-level procedure: the variants that succeeded (abstract action sequences) with their counts."""

    model_config = ConfigDict(extra="forbid")

    id: str
    situation: str
    variants: dict[str, int] = Field(default_factory=dict)
    failed: dict[str, int] = Field(default_factory=dict)
    """How often each variant's exact procedure was followed by a failed rollout of the situation."""
    watch_out: list[str] = Field(default_factory=list)
    version: int = Field(default=1, ge=1)

    def workflow(self, share: float = 0.75, min_support: int = 2) -> list[str] | None:
        """The majority variant's steps, if it holds `share` of the successes, at least `min_support` of them, and
        succeeded at least `share` of the times it was followed (a move that fails as often, e.g. answering the first
        number of a comparison, is no procedure)."""
        if not self.variants:
            return None
        best, count = max(self.variants.items(), key=lambda item: (item[1], -len(item[0])))
        total = sum(self.variants.values())
        if count < min_support or count / total < share or count / (count + self.failed.get(best, 0)) < share:
            return None
        return best.split(" ; ")

    def markdown(self) -> str:
        """XSkill's SKILL.md layout for this skill."""
        name = re.sub(r"[^a-z0-9]+", "-", self.situation.lower()).strip("-") or self.id
        steps = self.workflow(share=0.0, min_support=1) or []
        lines = [
            "---",
            f"name: {name}",
            f"description: procedure for tasks like '{self.situation}'",
            f"version: {self.version}",
            "---",
            "## When to use",
            f"Tasks that read '{self.situation}' (placeholders A, B, C are the task's numbers and names; R is the"
            " last result).",
            "## Workflow",
            *[f"{i}. {step}" for i, step in enumerate(steps, 1)],
        ]
        if len(self.variants) > 1:
            lines.append("## Variants seen")
            lines += [f"- {v} (succeeded {c}x)" for v, c in sorted(self.variants.items(), key=lambda kv: -kv[1])]
        if self.watch_out:
            lines.append("## Watch out for")
            lines += [f"- {w}" for w in self.watch_out]
        return "\n".join(lines) + "\n"


class KnowledgeOp(BaseModel):
    """One knowledge operation a summarizer emits (XSkill's `{"option": ..., "experience": ..., "modified_from": ...}`,
    extended to skills and explicit merges/deletes)."""

    model_config = ConfigDict(extra="forbid")

    option: Literal["add", "modify", "merge", "delete"]
    target: Literal["experience", "skill"] = "experience"
    situation: str = ""
    kind: str = "tip"
    advice: str = ""
    """An experience's advice (add, modify, merge)."""
    ids: list[str] = Field(default_factory=list)
    """The items modified (one), merged (several) or deleted."""
    variants: dict[str, int] = Field(default_factory=dict)
    """A skill's successful procedures and counts (add/modify: added to the skill's counts)."""
    failed: dict[str, int] = Field(default_factory=dict)
    """Failed rollouts' procedures and counts (added to the skill's `failed`)."""
    watch_out: list[str] = Field(default_factory=list)


class Context(BaseModel):
    """What the loop puts in the prompt, and which items it came from."""

    text: str = ""
    experience_ids: list[str] = Field(default_factory=list)
    skill_id: str | None = None


class MemorySettings(BaseModel):
    """The bank's knobs (the config's `xskill.memory`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int = Field(default=3, ge=1)
    merge_threshold: float = Field(default=0.70, gt=0, le=1)
    reduce_threshold: float = Field(default=0.60, gt=0, le=1)
    max_experiences: int = Field(default=120, ge=1)
    target_experiences: int = Field(default=100, ge=1)
    min_overlap: float = Field(default=0.5, ge=0, le=1)
    """A retrieved experience's situation must share this much (bigram Jaccard) with the query's."""
    skill_overlap: float = Field(default=0.8, ge=0, le=1)
    skill_share: float = Field(default=0.75, gt=0, le=1)
    skill_min_support: int = Field(default=2, ge=1)


class MemoryBank:
    """The experience and skill libraries with their index (module docstring)."""

    def __init__(self, settings: MemorySettings | None = None) -> None:
        self.settings = settings or MemorySettings()
        self.experiences: dict[str, Experience] = {}
        self.skills: dict[str, Skill] = {}
        self.next_experience = 0
        self.next_skill = 0
        self.op_counts: Counter[str] = Counter()
        self._index: BM25Okapi | None = None
        self._index_ids: list[str] = []

    # -- the knowledge operations ------------------------------------------------------------------------------

    def apply(self, ops: Iterable[KnowledgeOp]) -> dict[str, int]:
        """Applies the operations in order; returns how many of each kind took effect (`rejected`: named an
        unknown item or carried nothing)."""
        counts: Counter[str] = Counter()
        for op in ops:
            done = self._skill_op(op) if op.target == "skill" else self._experience_op(op)
            counts[done] += 1
        self.op_counts.update(counts)
        self._index = None
        return dict(counts)

    def _experience_op(self, op: KnowledgeOp) -> str:
        if op.option == "add":
            if not op.advice.strip():
                return "rejected"
            return self.add_experience(op.situation, op.advice, op.kind)
        if op.option == "modify":
            if len(op.ids) != 1 or op.ids[0] not in self.experiences or not op.advice.strip():
                return "rejected"
            item = self.experiences[op.ids[0]]
            item.advice = clip_words(op.advice)
            item.support += 1
            if op.situation:
                item.situation = op.situation
            return "modify"
        if op.option == "merge":
            found = [self.experiences[i] for i in op.ids if i in self.experiences]
            if len(found) < 2:
                return "rejected"
            self._merge(found, op.advice or None)
            return "merge"
        found_ids = [i for i in op.ids if i in self.experiences]
        for item_id in found_ids:
            del self.experiences[item_id]
        return "delete" if found_ids else "rejected"

    def _skill_op(self, op: KnowledgeOp) -> str:
        if op.option == "delete":
            found_ids = [i for i in op.ids if i in self.skills]
            for item_id in found_ids:
                del self.skills[item_id]
            return "delete" if found_ids else "rejected"
        if op.option == "merge":
            found = [self.skills[i] for i in op.ids if i in self.skills]
            if len(found) < 2:
                return "rejected"
            keep = found[0]
            for other in found[1:]:
                for variant, count in other.variants.items():
                    keep.variants[variant] = keep.variants.get(variant, 0) + count
                keep.watch_out = _unique([*keep.watch_out, *other.watch_out])[:3]
                del self.skills[other.id]
            keep.variants = _top_variants(keep.variants)
            keep.version += 1
            return "merge"
        existing = self.skills.get(op.ids[0]) if op.ids else self.skill_for_situation(op.situation)
        if op.option == "modify" and existing is None:
            return "rejected"
        if not op.variants and not op.watch_out:
            return "rejected"
        if existing is None:
            skill_id = f"S{self.next_skill}"
            self.next_skill += 1
            self.skills[skill_id] = Skill(
                id=skill_id,
                situation=op.situation,
                variants=_top_variants(dict(op.variants)),
                failed=dict(sorted(op.failed.items(), key=lambda kv: (-kv[1], kv[0]))[: 2 * MAX_VARIANTS]),
                watch_out=op.watch_out,
            )
            return "add"
        for variant, count in op.variants.items():
            existing.variants[variant] = existing.variants.get(variant, 0) + count
        for variant, count in op.failed.items():
            existing.failed[variant] = existing.failed.get(variant, 0) + count
        existing.variants = _top_variants(existing.variants)
        existing.failed = dict(sorted(existing.failed.items(), key=lambda kv: (-kv[1], kv[0]))[: 2 * MAX_VARIANTS])
        existing.watch_out = _unique([*op.watch_out, *existing.watch_out])[:3]
        existing.version += 1
        return "modify"

    def add_experience(self, situation: str, advice: str, kind: str = "tip") -> str:
        """XSkill's add: merged with the existing items at cosine ≥ `merge_threshold` (top 10), else appended."""
        new = Experience(id=self._new_id(), situation=situation, kind=kind, advice=clip_words(advice))
        similar = sorted(
            (
                (cosine(new.text, old.text), old)
                for old in self.experiences.values()
                if old.kind == kind
                and old.situation == situation
                and cosine(new.text, old.text) >= self.settings.merge_threshold
            ),
            key=lambda pair: -pair[0],
        )[:10]
        self.experiences[new.id] = new
        if similar:
            self._merge([new, *[old for _, old in similar]], None)
            return "merge"
        return "add"

    def _merge(self, items: Sequence[Experience], advice: str | None) -> Experience:
        """Several items become one: the new advice, else the most supported item's (the newest on a tie); support
        and usage add up; it keeps the situation of the item whose advice it takes."""
        base = max(items, key=lambda e: (e.support, int(e.id[1:])))
        merged = Experience(
            id=self._new_id(),
            situation=base.situation,
            kind=base.kind,
            advice=clip_words(advice or base.advice),
            support=sum(e.support for e in items),
            uses=sum(e.uses for e in items),
            wins=sum(e.wins for e in items),
        )
        for item in items:
            self.experiences.pop(item.id, None)
        self.experiences[merged.id] = merged
        return merged

    def _new_id(self) -> str:
        item_id = f"E{self.next_experience}"
        self.next_experience += 1
        return item_id

    def consolidate(self) -> dict[str, int]:
        """When the library is larger than `max_experiences`: merge pairs at `reduce_threshold`, then drop the least
        supported (then least winning, then oldest) items down to `target_experiences`."""
        settings = self.settings
        if len(self.experiences) <= settings.max_experiences:
            return {}
        merged = 0
        changed = True
        while changed and len(self.experiences) > settings.target_experiences:
            changed = False
            items = list(self.experiences.values())
            for i, a in enumerate(items):
                group = [
                    b
                    for b in items[i + 1 :]
                    if b.kind == a.kind and cosine(a.text, b.text) >= settings.reduce_threshold
                ]
                if group:
                    self._merge([a, *group], None)
                    merged += len(group)
                    changed = True
                    break
        deleted = 0
        if len(self.experiences) > settings.target_experiences:
            ranked = sorted(
                self.experiences.values(), key=lambda e: (e.support, e.wins / max(e.uses, 1), int(e.id[1:]))
            )
            for item in ranked[: len(self.experiences) - settings.target_experiences]:
                del self.experiences[item.id]
                deleted += 1
        self._index = None
        self.op_counts.update({"consolidate_merged": merged, "consolidate_deleted": deleted})
        return {"merged": merged, "deleted": deleted}

    def record_usage(self, used: dict[str, tuple[int, int]]) -> None:
        """Usage feedback: per experience id, (episodes it was shown in, of which succeeded)."""
        for item_id, (uses, wins) in used.items():
            if item_id in self.experiences:
                self.experiences[item_id].uses += uses
                self.experiences[item_id].wins += wins

    # -- retrieval and the prompt's context ---------------------------------------------------------------------

    def _ensure_index(self) -> None:
        if self._index is None and self.experiences:
            self._index_ids = list(self.experiences)
            corpus = [tokens(f"{e.situation} {e.advice}") for e in self.experiences.values()]
            self._index = BM25Okapi(corpus)

    def retrieve(self, query: str, k: int | None = None) -> list[Experience]:
        """The top `k` experiences by BM25 score for `query` (only items sharing a token with it)."""
        self._ensure_index()
        if self._index is None:
            return []
        query_tokens = tokens(query)
        scores = self._index.get_scores(query_tokens)
        vocabulary = set(query_tokens)
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
        found = []
        for i in ranked:
            item = self.experiences[self._index_ids[i]]
            relevant = bigram_overlap(query, item.situation) >= self.settings.min_overlap
            if relevant and vocabulary & set(tokens(f"{item.situation} {item.advice}")):
                found.append(item)
            if len(found) == (k or self.settings.k):
                break
        return found

    def skill_for_situation(self, situation: str) -> Skill | None:
        """The skill whose situation best matches (bigram overlap ≥ `skill_overlap`), else None."""
        best, best_overlap = None, 0.0
        for skill in self.skills.values():
            overlap = bigram_overlap(situation, skill.situation)
            if overlap > best_overlap:
                best, best_overlap = skill, overlap
        return best if best is not None and best_overlap >= self.settings.skill_overlap else None

    def context(self, instruction: str, mode: str = "both") -> Context:
        """The adapted context for a task: its skill's workflow with the task's numbers and names filled in, and
        the top-k tips (a tip of the task's own situation without its trigger, its placeholders filled in too).
        Empty when nothing applies."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if mode == "none":
            return Context()
        situation, values = situation_of(instruction)
        lines: list[str] = []
        skill_id = None
        if mode in ("skills", "both"):
            skill = self.skill_for_situation(situation)
            steps = skill.workflow(self.settings.skill_share, self.settings.skill_min_support) if skill else None
            if skill is not None and steps:
                lines.append("skill: " + " ; ".join(instantiate(step, values) for step in steps))
                skill_id = skill.id
        used: list[str] = []
        if mode in ("experiences", "both"):
            for item in self.retrieve(situation):
                # a tip of the task's own situation is shown without its trigger and with the task's values in
                advice = instantiate(item.advice, values) if item.situation == situation else item.text
                lines.append(f"tip: {advice}")
                used.append(item.id)
        if not lines:
            return Context()
        return Context(text="memory:\n" + "\n".join(lines), experience_ids=used, skill_id=skill_id)

    def view(self, situations: Sequence[str]) -> dict[str, Any]:
        """What a summarizer needs of the bank for some situations: their experiences (exact situation or
        retrieved) and skills."""
        experiences: dict[str, Experience] = {}
        skills: dict[str, Skill] = {}
        for situation in situations:
            for item in self.experiences.values():
                if item.situation == situation:
                    experiences[item.id] = item
            for item in self.retrieve(situation):
                experiences[item.id] = item
            skill = self.skill_for_situation(situation)
            if skill is not None:
                skills[skill.id] = skill
        return {
            "experiences": [e.model_dump() for e in experiences.values()],
            "skills": [s.model_dump() for s in skills.values()],
        }

    # -- snapshots ----------------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "settings": self.settings.model_dump(),
            "experiences": [e.model_dump() for e in self.experiences.values()],
            "skills": [s.model_dump() for s in self.skills.values()],
            "next_experience": self.next_experience,
            "next_skill": self.next_skill,
            "op_counts": dict(self.op_counts),
        }

    @classmethod
    def from_snapshot(cls, data: Any, source: str = "snapshot") -> MemoryBank:
        """A bank from `snapshot()`'s dict; a malformed one raises `SnapshotError` naming `source`."""
        try:
            if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
                raise ValueError(f"not a version-{SNAPSHOT_VERSION} memory snapshot")
            bank = cls(MemorySettings.model_validate(data["settings"]))
            for raw in data["experiences"]:
                item = Experience.model_validate(raw)
                bank.experiences[item.id] = item
            for raw in data["skills"]:
                skill = Skill.model_validate(raw)
                bank.skills[skill.id] = skill
            bank.next_experience = int(data["next_experience"])
            bank.next_skill = int(data["next_skill"])
            bank.op_counts = Counter({str(k): int(v) for k, v in data.get("op_counts", {}).items()})
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            raise SnapshotError(f"corrupt memory snapshot {source}: {_short(exc)}") from None
        return bank

    def save(self, path: Path) -> str:
        """Writes the snapshot atomically; returns its SHA-256."""
        body = json.dumps(self.snapshot(), indent=1, sort_keys=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
            handle.write(body)
        os.replace(handle.name, path)
        return hashlib.sha256(body.encode()).hexdigest()

    @classmethod
    def load(cls, path: Path, sha256: str | None = None) -> MemoryBank:
        """The bank saved at `path`; a missing, unreadable, altered (`sha256` given) or malformed file raises
        `SnapshotError` naming it."""
        try:
            body = path.read_bytes()
        except OSError as exc:
            raise SnapshotError(f"corrupt memory snapshot {path}: cannot read it ({exc.strerror})") from None
        if sha256 is not None and hashlib.sha256(body).hexdigest() != sha256:
            raise SnapshotError(f"corrupt memory snapshot {path}: its SHA-256 differs from the checkpoint's record")
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SnapshotError(f"corrupt memory snapshot {path}: not JSON ({_short(exc)})") from None
        return cls.from_snapshot(data, str(path))

    def export(self, directory: Path) -> None:
        """XSkill's files: `experiences.json` (`{"experiences": {"E0": text}}`) and `SKILL.md` (every skill)."""
        directory.mkdir(parents=True, exist_ok=True)
        texts = {e.id: e.text for e in self.experiences.values()}
        (directory / "experiences.json").write_text(json.dumps({"experiences": texts}, indent=1))
        (directory / "SKILL.md").write_text("\n".join(s.markdown() for s in self.skills.values()))

    def stats(self) -> dict[str, float]:
        return {
            "xskill/experiences": float(len(self.experiences)),
            "xskill/skills": float(len(self.skills)),
            **{f"xskill/ops/{k}": float(v) for k, v in sorted(self.op_counts.items())},
        }


def _top_variants(variants: dict[str, int]) -> dict[str, int]:
    return dict(sorted(variants.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_VARIANTS])


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200]
