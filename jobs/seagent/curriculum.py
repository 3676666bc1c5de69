"""SEAgent's curriculum generator as a task source: explore the app, keep a guidebook, propose harder tasks.

    tasks:
      entry: raygent.jobs.seagent.curriculum:Curriculum
      kwargs: {url: http://127.0.0.1:PORT/app/, explore_episodes: 40, generator: programmatic}

1. **Exploration** (once, before the first batch; SEAgent's phase −1): the app's first screen is read in a
   browser (`SeagentEnv`), every clickable control on it is clicked from a fresh page, and when a click brings up
   new controls (a menu, a dialog) each of those is clicked after it, within `explore_episodes` episodes. Each
   control reached becomes a guidebook entry: its path (`Audio > Mute`), role, name and the observed effect (the
   caption of what changed, `rewards.seagent.screens.caption`). Controls whose click changed nothing are kept out
   of the tasks.
2. **Proposals** (`next(index)`): single controls first — the instruction is the control's own label ("Mute.",
   "Toggle Shuffle.") — drawn by p(1 − p) + `floor` from their judged success p (untried: ½), so the frontier gets
   the batch. Controls judged done at least `master` of the time over `min_tries` episodes are mastered; once two
   are, compositions of mastered controls ("Mute. Then Toggle Shuffle.", difficulty 2) take a share of the batch
   equal to the mastered fraction (at most `max_composed`). Batch `index` is a pure function of the state and
   the index (a seeded draw), so a resumed run draws the same batch from the checkpointed state.
3. **Updates** (`observe`): the World State Model's judgements (the trajectories' `success` after the judge
   stage; its infrastructure failures skipped) update each entry's tries and successes; a success's captions are
   the entry's latest observed effect; controls seen on any screen of a judged episode that the guidebook lacks
   are added (discovered in training), up to `max_entries`.

`generator: llm` (cluster): every `llm_every` batches an LLM behind an OpenAI-compatible endpoint gets the
guidebook as text and the judged tasks since its last call (instruction, what changed, success), and answers
SEAgent's JSON (`{"software_document_new": ..., "exam_new": [[subtask, ...], ...]}`); its tasks fill a buffer the
next batches draw from and its document is kept as the guidebook's text. An answer that does not parse is asked
again (`llm_retries`), then the programmatic proposals stand in for that call (`llm_failures` counts it).

`state()` / `load_state()` carry the guidebook, the outcomes, the LLM's buffer and document, and the exploration's
finished flag, so a resumed run neither explores again nor forgets what it learned.

`Curricula` is the generalist's source: one curriculum per app's page sharing each batch, started from the
specialists' curricula.
"""

from __future__ import annotations

import json
import os
import random
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from raygent.environments.web.url_env import task_url, url_task
from raygent.platform.config import KeyProblem
from raygent.platform.contracts import Task, Trajectory
from raygent.platform.rl.tasks import TaskFunction, batch_seed
from raygent.rewards.seagent.screens import NO_CHANGE, caption
from raygent.rewards.seagent.wsm import infra_failed

CLICKABLE = frozenset({"button", "menuitem", "menuitemcheckbox", "menuitemradio", "checkbox", "tab", "option",
                       "link", "switch", "radio", "treeitem"})  # fmt: skip
_CONTROL = re.compile(r'^\[(\d+)\] (\S+)(?: "((?:[^"\\]|\\.)*)")?', re.M)
CURRICULUM_KEY = "curriculum"
"""`Task.params[CURRICULUM_KEY]`: `{"keys": [guidebook keys], "level": 1 | 2 | 3}` of a proposed task."""


class CurriculumSettings(BaseModel):
    """The curriculum's kwargs (`tasks.kwargs`); an unknown or bad one is a config error."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = ""
    """The app's page (filled from `env.url` by the recipe)."""
    explore_episodes: int = Field(default=40, ge=1)
    max_children: int = Field(default=8, ge=0)
    """New controls clicked after each control that brought some up."""
    floor: float = Field(default=0.05, ge=0)
    master: float = Field(default=0.6, gt=0, le=1)
    min_tries: int = Field(default=4, ge=1)
    max_composed: float = Field(default=0.5, ge=0, le=1)
    max_entries: int = Field(default=120, ge=1)
    generator: Literal["programmatic", "llm"] = "programmatic"
    endpoint: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    llm_every: int = Field(default=4, ge=1)
    llm_retries: int = Field(default=2, ge=0)
    llm_tasks: int = Field(default=30, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)

    @model_validator(mode="after")
    def _llm_has_an_endpoint(self) -> CurriculumSettings:
        if self.generator == "llm" and not (self.endpoint and self.model):
            raise KeyProblem("generator", "llm needs an endpoint and a model")
        return self


class CurriculaSettings(CurriculumSettings):
    """`tasks.kwargs` of `Curricula`: the pages (`urls`) and each page's curriculum's kwargs."""

    urls: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _pages_not_url(self) -> CurriculaSettings:
        if self.url:
            raise KeyProblem("url", "Curricula takes urls, one curriculum per page")
        return self


def controls(screen: str) -> list[tuple[str, str, str]]:
    """`(id, role, name)` of the clickable, named controls of a compact screen, in order."""
    out = []
    for element_id, role, name in _CONTROL.findall(screen):
        if role in CLICKABLE and name.strip():
            out.append((element_id, role, name.replace('\\"', '"')))
    return out


def instruction(path: Sequence[str]) -> str:
    """The instruction of one control: its own label, as a sentence."""
    name = path[-1].strip().rstrip(".…").strip()
    return f"{name}."


def compose(instructions: Sequence[str]) -> str:
    return " Then ".join(instructions)


Explorer = Callable[[str, int, int], list[dict[str, Any]]]
"""`explorer(url, episodes, max_children) -> guidebook entries` (the browser one below; tests may pass another)."""


def explore_in_browser(url: str, episodes: int, max_children: int) -> list[dict[str, Any]]:
    """Click every control of the first screen, and the controls each one brings up (see the module docstring)."""
    from raygent.jobs.seagent.env import SeagentEnv

    env = SeagentEnv(url=url, max_steps=4)
    task = url_task(url, "Explore the app.")
    entries: list[dict[str, Any]] = []
    used = 0

    def run(actions: Sequence[str]) -> tuple[str, str]:
        nonlocal used
        used += 1
        observation, _ = env.reset(options={"task": task})
        first = after = str(observation["text"])
        for action in actions:
            observation, *_ = env.step(action)
            after = str(observation["text"])
        return first, after

    try:
        first, _ = run([])
        top = controls(first)
        seen = {(role, name) for _, role, name in top}
        for element_id, role, name in top:
            if used >= episodes:
                break
            start, after = run([f"click({element_id})"])
            effect = caption(start, after)
            entries.append(_entry([name], role, effect))
            children = [c for c in controls(after) if (c[1], c[2]) not in seen][:max_children]
            for child_id, child_role, child_name in children:
                if used >= episodes:
                    break
                seen.add((child_role, child_name))
                start, done = run([f"click({element_id})", f"click({child_id})"])
                entries.append(_entry([name, child_name], child_role, caption(start, done)))
    finally:
        env.close()
    return entries


def _entry(path: Sequence[str], role: str, effect: str, discovered: bool = False) -> dict[str, Any]:
    return {
        "key": " > ".join(path),
        "path": list(path),
        "role": role,
        "effect": effect,
        "tries": 0,
        "successes": 0,
        "discovered": discovered,
    }


class Curriculum:
    """The task source (see the module docstring)."""

    Settings = CurriculumSettings

    def __init__(
        self,
        task_fn: TaskFunction,
        *,
        split: str,
        seed: int,
        batch_size: int,
        stage: str = "train",
        task_kwargs: dict[str, Any] | None = None,
        explorer: Explorer | None = None,
        **kwargs: Any,
    ) -> None:
        self.settings = CurriculumSettings(**kwargs)
        if not self.settings.url:
            raise ValueError("the curriculum needs the app's url (env.url)")
        self.seed, self.batch_size, self.stage = seed, batch_size, stage
        self.explorer = explorer or explore_in_browser
        self.guidebook: dict[str, dict[str, Any]] = {}
        self.composed: dict[str, dict[str, int]] = {}
        self.explored = False
        self.document = ""
        self.buffer: list[list[str]] = []
        self.feedback: list[dict[str, Any]] = []
        self.llm_calls = 0
        self.llm_failures = 0
        self.history: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ exploration and the guidebook

    def ensure_explored(self) -> None:
        if self.explored:
            return
        for entry in self.explorer(self.settings.url, self.settings.explore_episodes, self.settings.max_children):
            self.guidebook.setdefault(entry["key"], entry)
        self.explored = True

    def atoms(self) -> list[dict[str, Any]]:
        """The entries tasks are made of: those whose click changed something (discovered ones: not known yet)."""
        return [e for e in self.guidebook.values() if e["effect"] != NO_CHANGE]

    def rate(self, tries: int, successes: int) -> float:
        return successes / tries if tries else 0.5

    def mastered(self) -> list[dict[str, Any]]:
        s = self.settings
        return [
            e for e in self.atoms() if e["tries"] >= s.min_tries and self.rate(e["tries"], e["successes"]) >= s.master
        ]

    def guidebook_text(self) -> str:
        """The guidebook as text: one line per control with its observed effect and judged success."""
        lines = [self.document] if self.document else []
        for entry in self.guidebook.values():
            effect = entry["effect"].replace("\n", "; ") if entry["effect"] else "not tried yet"
            lines.append(
                f"- {entry['key']} ({entry['role']}): {effect} [judged done {entry['successes']}/{entry['tries']}]"
            )
        return "\n".join(lines)

    # ------------------------------------------------------------------ proposals

    def _weight(self, tries: int, successes: int) -> float:
        p = self.rate(tries, successes)
        return p * (1 - p) + self.settings.floor

    def _task(self, keys: Sequence[str], index: int, slot: int, text: str | None = None) -> Task:
        paths = [self.guidebook[k]["path"] for k in keys if k in self.guidebook]
        words = text or compose([instruction(p) for p in paths])
        level = 1 if len(keys) <= 1 else min(len(keys), 3)
        return url_task(
            self.settings.url,
            words,
            seed=index * 1000 + slot,
            difficulty=level - 1,
            **{CURRICULUM_KEY: {"keys": list(keys), "level": level}},
        )

    def next(self, index: int) -> list[Task]:
        self.ensure_explored()
        rng = random.Random(batch_seed(self.seed, index, f"{self.stage}/curriculum"))
        if self.settings.generator == "llm":
            self._maybe_ask_llm(index)
        atoms = self.atoms()
        if not atoms:
            raise RuntimeError(f"exploring {self.settings.url} found no control whose click changes the screen")
        mastered = self.mastered()
        share = min(self.settings.max_composed, len(mastered) / len(atoms)) if len(mastered) >= 2 else 0.0
        tasks: list[Task] = []
        for slot in range(self.batch_size):
            if self.buffer and rng.random() < 0.5:
                subtasks = self.buffer.pop(0)
                tasks.append(self._task([], index, slot, compose(subtasks)))
                continue
            if share and rng.random() < share:
                first, second = rng.sample(mastered, 2)
                tasks.append(self._task([first["key"], second["key"]], index, slot))
                continue
            weights = [self._weight(e["tries"], e["successes"]) for e in atoms]
            chosen = rng.choices(atoms, weights=weights, k=1)[0]
            tasks.append(self._task([chosen["key"]], index, slot))
        return tasks

    # ------------------------------------------------------------------ updates from judgements

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        for trajectory in trajectories:
            if trajectory.infra_failure or infra_failed(trajectory.judgement) or trajectory.success is None:
                continue
            meta = trajectory.task.params.get(CURRICULUM_KEY) or {}
            keys = [k for k in meta.get("keys", []) if k in self.guidebook]
            success = bool(trajectory.success)
            captions = list((trajectory.judgement.info.get("captions") if trajectory.judgement else None) or [])
            if len(keys) == 1:
                entry = self.guidebook[keys[0]]
                entry["tries"] += 1
                entry["successes"] += int(success)
                changed = [c for c in captions if c != NO_CHANGE]
                if success and changed:
                    entry["effect"] = changed[-1]
            elif len(keys) > 1:
                stats = self.composed.setdefault(" + ".join(keys), {"tries": 0, "successes": 0})
                stats["tries"] += 1
                stats["successes"] += int(success)
            self._discover(trajectory)
            self.feedback.append(
                {"instruction": trajectory.task.instruction, "changes": "; ".join(captions)[:300], "success": success}
            )
            self.history.append({"instruction": trajectory.task.instruction, "level": meta.get("level", 0),
                                 "success": success})  # fmt: skip
        self.feedback = self.feedback[-60:]
        self.history = self.history[-400:]

    def _discover(self, trajectory: Trajectory) -> None:
        known = {(e["role"], e["path"][-1]) for e in self.guidebook.values()}
        for step in trajectory.steps:
            for _, role, name in controls(step.observation.text):
                if len(self.guidebook) >= self.settings.max_entries:
                    return
                if (role, name) not in known:
                    known.add((role, name))
                    self.guidebook.setdefault(name, _entry([name], role, "", discovered=True))

    # ------------------------------------------------------------------ the LLM generator (cluster)

    def _maybe_ask_llm(self, index: int) -> None:
        if self.buffer or index % self.settings.llm_every:
            return
        self.llm_calls += 1
        try:
            document, tasks = ask_generator(self.settings, self.guidebook_text(), self.feedback)
        except GeneratorFailed:
            self.llm_failures += 1
            return
        self.document = document
        self.buffer = tasks[: self.settings.llm_tasks]
        self.feedback = []

    # ------------------------------------------------------------------ checkpoint

    def state(self) -> dict[str, Any]:
        return {
            "guidebook": self.guidebook,
            "composed": self.composed,
            "explored": self.explored,
            "document": self.document,
            "buffer": self.buffer,
            "feedback": self.feedback,
            "llm_calls": self.llm_calls,
            "llm_failures": self.llm_failures,
            "history": self.history,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        if not state:
            return
        self.guidebook = {k: dict(v) for k, v in state.get("guidebook", {}).items()}
        self.composed = {k: dict(v) for k, v in state.get("composed", {}).items()}
        self.explored = bool(state.get("explored", False))
        self.document = str(state.get("document", ""))
        self.buffer = [list(t) for t in state.get("buffer", [])]
        self.feedback = list(state.get("feedback", []))
        self.llm_calls = int(state.get("llm_calls", 0))
        self.llm_failures = int(state.get("llm_failures", 0))
        self.history = list(state.get("history", []))


# ---------------------------------------------------------------------- the LLM generator's prompt and client


class Curricula:
    """A generalist's task source: one `Curriculum` per page of `urls` (kwargs are each curriculum's), sharing
    every batch (`batch_size` split in turn, the first pages taking the remainder); each judged trajectory goes
    back to the curriculum of the page it ran on. A generalist starts from its specialists' curricula
    (`load_state` with their states: guidebooks explored, judged tries kept). The state is a list in the order of
    `urls` (a curriculum's own state holds no URL), so a resumed run whose server came back on another port
    restores each page's curriculum."""

    Settings = CurriculaSettings

    def __init__(
        self,
        task_fn: TaskFunction,
        *,
        split: str,
        seed: int,
        batch_size: int,
        stage: str = "train",
        task_kwargs: dict[str, Any] | None = None,
        urls: Sequence[str] = (),
        explorer: Explorer | None = None,
        **kwargs: Any,
    ) -> None:
        pages = list(dict.fromkeys(urls))
        if len(pages) < 1 or batch_size < len(pages):
            raise ValueError(f"Curricula needs at least one url and a batch of one task per url, got {pages} and "
                             f"{batch_size}")  # fmt: skip
        share, extra = divmod(batch_size, len(pages))
        self.parts = {}
        for index, url in enumerate(pages):
            size = share + (index < extra)
            self.parts[url] = Curriculum(
                task_fn,
                split=split,
                seed=seed,
                batch_size=size,
                stage=f"{stage}/{url}",
                explorer=explorer,
                url=url,
                **kwargs,
            )

    def next(self, index: int) -> list[Task]:
        return [task for part in self.parts.values() for task in part.next(index)]

    def observe(self, trajectories: Sequence[Trajectory]) -> None:
        for url, part in self.parts.items():
            part.observe([t for t in trajectories if task_url(t.task) == url])

    def state(self) -> dict[str, Any]:
        return {"pages": [part.state() for part in self.parts.values()]}

    def load_state(self, state: dict[str, Any]) -> None:
        """`{"pages": [one curriculum state per url, in order]}`; a state of another number of pages is refused."""
        pages = (state or {}).get("pages")
        if pages is None:
            return
        if len(pages) != len(self.parts):
            raise ValueError(f"a state of {len(pages)} curricula for {len(self.parts)} pages")
        for part, part_state in zip(self.parts.values(), pages, strict=True):
            part.load_state(part_state)


class GeneratorFailed(RuntimeError):
    """The LLM generator gave no usable answer (after its retries)."""


GENERATOR_PROMPT = (
    "You are a teacher writing exercises for a UI agent that is learning a web app by itself.\n"
    "The app's usage manual so far:\n{guidebook}\n\n"
    "The agent's last tasks, what changed on the screen, and whether a judge found each task done:\n{feedback}\n\n"
    "Analyse the agent's performance; integrate what the results show into the manual (update the usage manual); "
    "then design at least {n} new tasks of increased difficulty that target its failures. Each task must be "
    "concise, atomic and executable from the app's initial screen (refer to nothing that does not exist yet). "
    "Dependent tasks are one ordered list of subtasks.\n"
    'Answer with JSON only: {{"software_document_new": "<the updated manual>", '
    '"exam_new": [["<subtask 1>", "<subtask 2>"], ["<task>"]]}}'
)


def generator_prompt(guidebook: str, feedback: Sequence[dict[str, Any]], n: int) -> str:
    lines = [
        f"- {f['instruction']} | changed: {f.get('changes') or 'nothing'} | {'done' if f['success'] else 'not done'}"
        for f in feedback
    ]
    return GENERATOR_PROMPT.format(
        guidebook=guidebook or "EMPTY FOR YOU TO BUILD", feedback="\n".join(lines) or "none yet", n=n
    )


def parse_generator(text: str) -> tuple[str, list[list[str]]]:
    """The manual and the tasks of a generator answer; `GeneratorFailed` when it does not follow the format."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise GeneratorFailed("no JSON object in the answer")
    try:
        body = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        raise GeneratorFailed(f"the answer's JSON does not parse: {error}") from None
    document, exam = body.get("software_document_new"), body.get("exam_new")
    if not isinstance(document, str) or not isinstance(exam, list):
        raise GeneratorFailed("software_document_new must be a string and exam_new a list")
    tasks = []
    for item in exam:
        subtasks = [item] if isinstance(item, str) else item
        if (
            not isinstance(subtasks, list)
            or not subtasks
            or not all(isinstance(s, str) and s.strip() for s in subtasks)
        ):
            raise GeneratorFailed(f"exam_new holds {item!r}, not a task or a list of subtasks")
        tasks.append([s.strip() for s in subtasks])
    if not tasks:
        raise GeneratorFailed("exam_new is empty")
    return document, tasks


def ask_generator(
    settings: CurriculumSettings, guidebook: str, feedback: Sequence[dict[str, Any]]
) -> tuple[str, list[list[str]]]:
    """One generator call through the OpenAI-compatible endpoint, retried on bad answers."""
    import httpx

    key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {
        "model": settings.model,
        "messages": [{"role": "user", "content": generator_prompt(guidebook, feedback, settings.llm_tasks)}],
        "temperature": 1.0,
        "max_tokens": 2048,
    }
    problem = ""
    for _ in range(settings.llm_retries + 1):
        try:
            response = httpx.post(
                f"{str(settings.endpoint).rstrip('/')}/chat/completions", json=body, headers=headers,
                timeout=settings.timeout_s,
            )  # fmt: skip
            response.raise_for_status()
            return parse_generator(str(response.json()["choices"][0]["message"]["content"]))
        except GeneratorFailed as error:
            problem = str(error)
        except Exception as error:  # the endpoint failed
            problem = f"{type(error).__name__}: {str(error)[:200]}"
    raise GeneratorFailed(problem)


def crc(text: str) -> int:
    return zlib.crc32(text.encode())
