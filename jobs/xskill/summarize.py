"""Accumulation: a summarizer contrasts the successes and failures of one task's rollouts and emits knowledge
operations (XSkill's cross-rollout critique and skill extraction).

Two implementations behind one interface (`Summarizer.summarize(groups, view) -> list[KnowledgeOp]`):

- `ProgrammaticSummarizer` (**laptop scale**, the default): each rollout becomes its abstract procedure (numbers
  that are the task's become `A`, `B`, ...; the latest tool result `R`). Tips come from what successes share and
  failures lack: how many tool calls and which tools (`count`), the first action (`first`), the final action
  (`final`), well-formed actions (`format`); a tip an existing item of the same kind already says is reinforced
  (`modify`), a tip the group contradicts is deleted. Every successful procedure is added to the situation's skill
  (its variants and counts), and the commonest failing first move becomes a "Watch out for" line.
- `LMSummarizer` (**cluster scale**): the same contrast written as a prompt (the rollouts' procedures and outcomes,
  the experiences used, the existing tips) to a language model — the run's own policy engine (`PolicyChat`) or any
  OpenAI-compatible endpoint (`OpenAIChat`) — whose JSON operations (`{"option": "add", "experience": ...}`,
  `{"option": "modify", "experience": ..., "modified_from": "E17"}`, XSkill's critique format) are parsed;
  objects that do not parse, or copy the prompt's format placeholder back, are counted and skipped. Skill variants
  still come from the successful procedures (an LM at this scale cannot write them reliably; a cluster model may
  be prompted for whole SKILL.md documents instead).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from raygent.jobs.xskill.memory import PLACEHOLDERS, KnowledgeOp, Value, situation_of

CONTEXT_SEPARATOR = "\n--\n"
"""Between the memory context and the environment's first observation in the loop's first observation text."""
_NUMBER = re.compile(r"(?<![\w.])\d+")
_ACTION_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(")


def strip_context(text: str) -> str:
    """An observation text without the memory context the loop put before it."""
    head, sep, tail = text.partition(CONTEXT_SEPARATOR)
    return tail if sep and head.startswith("memory:") else text


@dataclass(frozen=True)
class Rollout:
    """One episode as the summarizer sees it: the observation before each action, the actions, the outcome, and
    the experiences the loop showed it."""

    observations: tuple[str, ...]
    actions: tuple[str, ...]
    success: bool
    valid: tuple[bool, ...] = ()
    used: tuple[str, ...] = ()


@dataclass
class Group:
    """The rollouts of one task."""

    instruction: str
    rollouts: list[Rollout] = field(default_factory=list)

    @property
    def situation(self) -> str:
        return situation_of(self.instruction)[0]


def abstract_procedure(instruction: str, rollout: Rollout) -> list[str]:
    """Each action with the task's numbers as placeholders and the latest result as `R` (the last number of an
    observation after the first: the first shows the task, later ones the tools' answers). A number equal to several
    of the task's numbers takes the first placeholder the procedure has not used yet (`5*5+5`: `A*B`, then `R+C`)."""
    _, values = situation_of(instruction)
    candidates: dict[Value, list[str]] = {}
    for index, value in enumerate(values[: len(PLACEHOLDERS)]):
        candidates.setdefault(value, []).append(PLACEHOLDERS[index])
    used: set[str] = set()
    steps = []
    for turn, (observation, action) in enumerate(zip(rollout.observations, rollout.actions, strict=False)):
        shown = [int(n) for n in _NUMBER.findall(strip_context(observation))] if turn else []
        result = shown[-1] if shown else None

        def replace(match: re.Match[str], result: int | None = result) -> str:
            number = int(match.group())
            if result is not None and number == result:
                return "R"
            letters = candidates.get(number)
            if not letters:
                return match.group()
            letter = next((x for x in letters if x not in used), letters[0])
            used.add(letter)
            return letter

        steps.append(_NUMBER.sub(replace, action.strip()))
    return steps


def action_name(action: str) -> str:
    match = _ACTION_NAME.match(action)
    return match.group(1) if match else "?"


def majority(items: Sequence[Any], share: float) -> Any | None:
    if not items:
        return None
    value, count = Counter(items).most_common(1)[0]
    return value if count / len(items) >= share else None


def share_of(items: Sequence[Any], value: Any) -> float:
    return sum(item == value for item in items) / len(items) if items else 0.0


class Summarizer(Protocol):
    def summarize(self, groups: Sequence[Group], view: dict[str, Any]) -> list[KnowledgeOp]:
        """Knowledge operations from the groups' rollouts, given the bank's items for their situations (`view`)."""
        ...


class ProgrammaticSummarizer:
    """The laptop-scale summarizer (module docstring). `share`: the fraction of successes a feature must hold;
    `max_ops`: experience operations per group (XSkill: 3). An environment with other actions overrides
    `procedure` (a rollout as abstract steps) and `specific` (a step only this task can use), e.g. the web suite's
    `WebSummarizer`."""

    def __init__(self, share: float = 0.75, max_ops: int = 3) -> None:
        self.share = share
        self.max_ops = max_ops
        self.stats: Counter[str] = Counter()

    def procedure(self, instruction: str, rollout: Rollout) -> list[str]:
        return abstract_procedure(instruction, rollout)

    def specific(self, text: str) -> bool:
        """Whether abstract steps still hold this task's literals (a number no placeholder stands for)."""
        return bool(re.search(r"\d", text))

    def tips(self, group: Group) -> list[tuple[str, str]]:
        """(kind, advice) for what the group's successes share and its failures mostly lack."""
        wins = [r for r in group.rollouts if r.success]
        losses = [r for r in group.rollouts if not r.success]
        if not wins or not losses:
            return []
        procedures = {id(r): self.procedure(group.instruction, r) for r in group.rollouts}
        found: list[tuple[str, str]] = []
        names = [tuple(action_name(a) for a in r.actions) for r in wins]
        lost_names = [tuple(action_name(a) for a in r.actions) for r in losses]
        pattern = majority(names, self.share)
        if pattern and share_of(lost_names, pattern) < 0.5:
            *tools, last = pattern
            if tools:
                counts = Counter(tools)
                uses = ", ".join(f"{name} {n} time{'s' if n > 1 else ''}" for name, n in counts.items())
                found.append(("count", f"use {uses}, then {last}."))
            else:
                found.append(("count", f"reply {last}(...) at once, without a tool call."))
        first = majority([procedures[id(r)][0] for r in wins if procedures[id(r)]], self.share)
        lost_first = [procedures[id(r)][0] for r in losses if procedures[id(r)]]
        final_name = Counter(n[-1] for n in names if n).most_common(1)[0][0] if any(names) else None
        if (
            first
            and action_name(first) != final_name
            and share_of(lost_first, first) < 0.5
            and not self.specific(first)
        ):
            found.append(("first", f"start with {first}."))
        final = majority([procedures[id(r)][-1] for r in wins if procedures[id(r)]], self.share)
        lost_final = [procedures[id(r)][-1] for r in losses if procedures[id(r)]]
        if final and "(R)" in final and share_of(lost_final, final) < 0.5:
            found.append(("final", f"finish with {final}: the last result."))
        return found + self.format_tip(wins, losses)

    @staticmethod
    def format_tip(wins: Sequence[Rollout], losses: Sequence[Rollout]) -> list[tuple[str, str]]:
        """The `format` tip when every success is well formed and at least half the failures are not."""
        if all(all(r.valid) for r in wins) and sum(not all(r.valid) for r in losses) * 2 >= len(losses):
            return [("format", "reply with exactly one well-formed action per turn.")]
        return []

    def contradicted(self, group: Group, existing: Sequence[dict[str, Any]]) -> list[str]:
        """Ids of this situation's `first` tips whose move the group's failures make at least as often as its
        successes (at least two failures doing it)."""
        wins = [self.procedure(group.instruction, r) for r in group.rollouts if r.success]
        losses = [self.procedure(group.instruction, r) for r in group.rollouts if not r.success]
        doomed = []
        for item in existing:
            if item["situation"] != group.situation or item["kind"] != "first":
                continue
            move = item["advice"].removeprefix("start with ").rstrip(".")
            lost = sum(bool(p) and p[0] == move for p in losses)
            won = sum(bool(p) and p[0] == move for p in wins)
            if lost >= 2 and lost / max(len(losses), 1) >= won / max(len(wins), 1):
                doomed.append(item["id"])
        return doomed

    def skill_op(self, group: Group, skills: Sequence[dict[str, Any]]) -> KnowledgeOp | None:
        """The successful procedures as variants of the situation's skill, and the commonest failing first move."""
        # a procedure that still holds this task's literals (`specific`) is the task's, not the situation's: no skill
        procedures = [" ; ".join(self.procedure(group.instruction, r)) for r in group.rollouts if r.success]
        wins = [p for p in procedures if not self.specific(p)]
        losses = [self.procedure(group.instruction, r) for r in group.rollouts if not r.success]
        lost = Counter(" ; ".join(p) for p in losses)
        watch = []
        if wins and losses:
            first_ok = {w.split(" ; ")[0] for w in wins}
            bad = Counter(p[0] for p in losses if p and p[0] not in first_ok).most_common(1)
            if bad:
                watch.append(f"{bad[0][0]} as the first move failed {bad[0][1]} of {len(losses)} times.")
        existing = [s for s in skills if s["situation"] == group.situation]
        if not wins and not (watch and existing):
            return None
        option = "modify" if existing else "add"
        ids = [existing[0]["id"]] if existing else []
        return KnowledgeOp(
            option=option,
            target="skill",
            situation=group.situation,
            ids=ids,
            variants=dict(Counter(wins)),
            failed={p: n for p, n in lost.items() if not self.specific(p)},
            watch_out=watch,
        )

    def summarize(self, groups: Sequence[Group], view: dict[str, Any]) -> list[KnowledgeOp]:
        ops: list[KnowledgeOp] = []
        experiences = list(view.get("experiences", []))
        skills = list(view.get("skills", []))
        for group in groups:
            group_ops: list[KnowledgeOp] = []
            doomed = self.contradicted(group, experiences)
            if doomed:
                group_ops.append(KnowledgeOp(option="delete", ids=doomed))
            for kind, advice in self.tips(group):
                same = [
                    e
                    for e in experiences
                    if e["situation"] == group.situation and e["kind"] == kind and e["id"] not in doomed
                ]
                if same:
                    group_ops.append(
                        KnowledgeOp(
                            option="modify", ids=[same[0]["id"]], situation=group.situation, kind=kind, advice=advice
                        )
                    )
                else:
                    group_ops.append(KnowledgeOp(option="add", situation=group.situation, kind=kind, advice=advice))
            ops += group_ops[: self.max_ops]
            self.stats["groups"] += 1
            skill = self.skill_op(group, skills)
            if skill is not None:
                ops.append(skill)
        return ops


# -- the LM summarizer -----------------------------------------------------------------------------------------

CRITIQUE_PROMPT = """You improve an agent's experience library from its rollouts on one task.
Task pattern: {situation}
Rollouts (actions in order; A, B, C are the task's numbers, R the last tool result):
{rollouts}
Experiences shown to these rollouts: {used}
Existing experiences:
{existing}
Compare the successful and failed rollouts. Write at most {max_ops} operations, one JSON object per line:
{{"option": "add", "experience": "When ...: <tip, at most 64 words>"}}
{{"option": "modify", "experience": "When ...: <better tip>", "modified_from": "E3"}}
Operations:
"""

ChatFn = Callable[[str], str]
"""A completion function: prompt text in, model text out."""


_PLACEHOLDER = re.compile(r"[<\[][^<>\[\]]*\btip[^<>\[\]]*[>\]]")
"""A placeholder for a tip instead of one: the prompt's own (`<tip, at most 64 words>`, `<better tip>`) copied back,
or a bracketed stand-in (`[tip]`, `[tip_description]`), as SmolLM2-135M writes them (bench/xskill_summarizer.py)."""


def parse_ops(text: str, situation: str) -> tuple[list[KnowledgeOp], int]:
    """The operations in an LM's answer (one JSON object each), and how many objects were not one: did not parse,
    or copied the prompt's format placeholder instead of a tip."""
    ops: list[KnowledgeOp] = []
    failed = 0
    for raw in re.findall(r"\{[^{}]*\}", text):
        try:
            data = json.loads(raw)
            option = data["option"]
            advice = str(data.get("experience", "")).strip()
            advice = re.sub(r"^When[^:]*:\s*", "", advice) or advice
            if _PLACEHOLDER.search(advice):  # a stand-in, not a tip
                failed += 1
                continue
            ids = [str(data["modified_from"])] if data.get("modified_from") else [str(i) for i in data.get("ids", [])]
            ops.append(KnowledgeOp(option=option, situation=situation, kind="lm", advice=advice, ids=ids))
        except (ValueError, KeyError, TypeError):
            failed += 1
    return ops, failed


class LMSummarizer:
    """The cluster-scale summarizer (module docstring): `chat` is `PolicyChat` or `OpenAIChat`."""

    def __init__(self, chat: ChatFn, max_ops: int = 3, programmatic: ProgrammaticSummarizer | None = None) -> None:
        self.chat = chat
        self.max_ops = max_ops
        self.programmatic = programmatic or ProgrammaticSummarizer(max_ops=max_ops)
        """Writes the skills and the rollouts' abstract procedures (the environment's summarizer)."""
        self.stats: Counter[str] = Counter()

    def prompt(self, group: Group, view: dict[str, Any]) -> str:
        lines = []
        for number, rollout in enumerate(group.rollouts, 1):
            steps = " ; ".join(self.programmatic.procedure(group.instruction, rollout))
            lines.append(f"{number}. {'SUCCESS' if rollout.success else 'FAILURE'}: {steps}")
        existing = [f"{e['id']}: When '{e['situation']}': {e['advice']}" for e in view.get("experiences", [])]
        used = sorted({i for r in group.rollouts for i in r.used})
        return CRITIQUE_PROMPT.format(
            situation=group.situation,
            rollouts="\n".join(lines),
            used=", ".join(used) or "none",
            existing="\n".join(existing) or "none",
            max_ops=self.max_ops,
        )

    def summarize(self, groups: Sequence[Group], view: dict[str, Any]) -> list[KnowledgeOp]:
        ops: list[KnowledgeOp] = []
        for group in groups:
            if not any(r.success for r in group.rollouts) or all(r.success for r in group.rollouts):
                skill = self.programmatic.skill_op(group, view.get("skills", []))
                ops += [skill] if skill else []
                continue  # nothing to contrast
            self.stats["lm_calls"] += 1
            try:
                answer = self.chat(self.prompt(group, view))
            except Exception:  # a failed endpoint costs this group's tips, never the run
                self.stats["lm_failures"] += 1
                answer = ""
            parsed, failed = parse_ops(answer, group.situation)
            self.stats["lm_unparsed"] += failed
            self.stats["lm_ops"] += len(parsed[: self.max_ops])
            ops += parsed[: self.max_ops]
            skill = self.programmatic.skill_op(group, view.get("skills", []))
            ops += [skill] if skill else []
        return ops


class PolicyChat:
    """Chat through the run's policy engine (an `InferenceEngine` actor handle or instance): the prompt as one user
    message in the policy's chat template, greedy."""

    def __init__(self, engine: Any, tokenizer: Any, max_new_tokens: int = 160, timeout_s: float = 120.0) -> None:
        self.engine, self.tokenizer = engine, tokenizer
        self.max_new_tokens, self.timeout_s = max_new_tokens, timeout_s

    def __call__(self, prompt: str) -> str:
        from raygent.policies.backends import SamplingParams
        from raygent.policies.prompts import ChatMessage, encode_prompt

        ids = encode_prompt(self.tokenizer, [ChatMessage(role="user", content=prompt)])
        params = SamplingParams(temperature=0.0, max_new_tokens=self.max_new_tokens)
        if hasattr(self.engine.generate, "remote"):
            import ray

            completions = ray.get(self.engine.generate.remote([ids], params), timeout=self.timeout_s)
        else:  # an engine in this process: its backend directly (its batching loop belongs to one event loop)
            completions = self.engine.backend.generate([ids], params)
        return str(completions[0].text)


class OpenAIChat:
    """Chat through any OpenAI-compatible endpoint (`POST {base_url}/chat/completions`), e.g. a vLLM server or
    `raygent serve`."""

    def __init__(
        self, base_url: str, model: str, api_key: str | None = None, max_tokens: int = 256, timeout_s: float = 60.0
    ) -> None:
        self.base_url, self.model, self.api_key = base_url.rstrip("/"), model, api_key
        self.max_tokens, self.timeout_s = max_tokens, timeout_s

    def __call__(self, prompt: str) -> str:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
        }
        response = httpx.post(f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout_s)
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])
