"""Inference: the agent loop that puts retrieved experiences and the matching skill into the prompt.

    rollout:
      agent:
        entry: raygent.jobs.xskill.loop:MemoryLoop
        kwargs: {mode: both, timeout_s: 2.0}      # MemoryLoop.Settings; `actor` is filled in by the recipe

`MemoryLoop` is a `ChatLoop`: at the start of an episode it asks the memory actor for the task's context (the
adapted skill and the top-k tips, `MemoryBank.context`) and puts it before the first observation, separated by
`CONTEXT_SEPARATOR`; the prompt then carries it for the whole episode (in the first turn, then in the history), as
XSkill prepends its context to the system prompt (with `every_turn: true`, before every observation, for prompts
that keep no history). The mode is the task's `params["xskill_mode"]` when set (the
job's evaluation variants), else `rollout.agent.kwargs.mode`.

A request that fails or takes longer than `timeout_s` gives no context for that episode; the loop never raises for
it. The first observation's `info["xskill"]` says what happened (`ok`, `empty`, `off`, `failed`, `timeout`) and
`info["xskill_used"]` lists the experience ids shown, so the hook counts failures and feeds usage back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from raygent.jobs.xskill.actor import NAMESPACE
from raygent.jobs.xskill.memory import MemoryBank
from raygent.jobs.xskill.summarize import CONTEXT_SEPARATOR
from raygent.platform.contracts import Observation, Task
from raygent.platform.rl.agent_loop import ChatLoop, LoopContext

LOCAL_BANKS: dict[str, MemoryBank] = {}
"""Banks served in process by name, for a loop that runs without Ray (unit tests, a notebook)."""
_HANDLES: dict[str, Any] = {}


class LoopSettings(BaseModel):
    """`rollout.agent.kwargs` of `MemoryLoop` (its `Settings`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    actor: str = "xskill-memory"
    """The memory actor's name (in the `raygent-xskill` namespace); the recipe sets it per run."""
    mode: Literal["none", "experiences", "skills", "both"] = "both"
    timeout_s: float = Field(default=2.0, gt=0)
    every_turn: bool = False
    """Put the context before every observation, not only the first: for a prompt without history
    (`policy.prompt.max_history: 0`, the web agent's), where the first turn's context would be gone by the second."""


def with_context(context_text: str, observation_text: str) -> str:
    """The first observation text with the memory context before it (also what SFT demonstrations show)."""
    return f"{context_text}{CONTEXT_SEPARATOR}{observation_text}" if context_text else observation_text


def fetch_context(name: str, instruction: str, mode: str, timeout_s: float) -> tuple[dict[str, Any], str]:
    """(the context dict, status): from the named actor, or `LOCAL_BANKS` without Ray."""
    if mode == "none":
        return {}, "off"
    import ray

    if not ray.is_initialized():
        if name in LOCAL_BANKS:
            return LOCAL_BANKS[name].context(instruction, mode).model_dump(), "ok"
        return {}, "failed"
    from ray.exceptions import GetTimeoutError

    try:
        if name not in _HANDLES:
            _HANDLES[name] = ray.get_actor(name, namespace=NAMESPACE)
        return ray.get(_HANDLES[name].context.remote(instruction, mode), timeout=timeout_s), "ok"
    except GetTimeoutError:
        return {}, "timeout"
    except Exception:  # a dead or missing actor, a bad answer: no context this episode
        _HANDLES.pop(name, None)
        return {}, "failed"


class MemoryLoop(ChatLoop):
    """The chat loop with XSkill's memory in the prompt (module docstring)."""

    current: Observation

    Settings = LoopSettings

    def __init__(self, task: Task, observation: Any, context: LoopContext, **kwargs: Any) -> None:
        super().__init__(task, observation, context)
        settings = LoopSettings.model_validate(kwargs)
        mode = str(task.params.get("xskill_mode", settings.mode))
        found, status = fetch_context(settings.actor, task.instruction, mode, settings.timeout_s)
        text = str(found.get("text", "")) if isinstance(found, dict) else ""
        used = [str(i) for i in found.get("experience_ids", [])] if isinstance(found, dict) and text else []
        if status == "ok" and not text:
            status = "empty"
        info = {**self.current.info, "xskill": status, "xskill_mode": mode, "xskill_used": ",".join(used)}
        self.current = self.current.model_copy(update={"text": with_context(text, self.current.text), "info": info})
        self.context_text = text if settings.every_turn else ""

    def observe(self, observation: Any, reward: float, info: dict[str, Any]) -> None:
        super().observe(observation, reward, info)
        if self.context_text:
            self.current = self.current.model_copy(update={"text": with_context(self.context_text, self.current.text)})
