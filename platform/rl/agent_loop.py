"""Agent loops: how an episode's context becomes the next prompt, and a completion the next move.

    rollout:
      agent: {entry: raygent.platform.rl.agent_loop:ChatLoop}   # the default; any class with this interface

A loop is a component (`platform.plugins`: its kwargs are checked against the class's `Settings` when the config
is). `EpisodeRunner` builds one loop per episode, `cls(task, first_observation, context, **kwargs)`, and on each
turn asks it for the prompt (`prompt()`: exact token ids, optionally images), hands it the sampled completion
(`act(text)`), and:

- `EnvAction(text)`: the runner steps the environment with `text` and passes the new observation back
  (`observe(observation, reward, info)`);
- `ToolResult(text)`: an agent-side tool call the loop has already answered (a documentation search, a memory
  lookup, a retriever): the result goes into the loop's own context and the next prompt is built without an
  environment step. The policy call is still a trained `Step` (`tool_call=True`, reward 0).

A loop owns the episode's context, so memory in the prompt (XSkill's experiences), documentation tools (DocOS)
and verification tools (FactGuard) are loops, not edits to the runner. The runner keeps the threads, deadlines,
retries and the turn limit (`rollout.max_turns` counts every policy call, tool calls included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from transformers import PreTrainedTokenizerBase

from raygent.platform.contracts import Observation, Task
from raygent.platform.plugins import NoSettings
from raygent.policies.prompts import PromptFormat, Turn, encode_prompt


@dataclass(frozen=True)
class Prompt:
    """What the engine is asked to continue: token ids, and the images of a multimodal prompt (engines that take
    images read them; the text-only `hf`/`vllm` backends of this repository do not)."""

    ids: list[int]
    images: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class EnvAction:
    """Step the environment with `text`."""

    text: str


@dataclass(frozen=True)
class ToolResult:
    """An agent-side tool call, already answered by the loop: no environment step."""

    name: str
    result: str


@dataclass(frozen=True)
class LoopContext:
    """What every loop may use: the tokenizer and the run's prompt format (a loop's own settings are its kwargs,
    `rollout.agent.kwargs`)."""

    tokenizer: PreTrainedTokenizerBase
    prompt_format: PromptFormat


@runtime_checkable
class AgentLoop(Protocol):
    def prompt(self) -> Prompt:
        """The next policy call's prompt."""
        ...

    def observation(self) -> Observation:
        """The observation the current prompt was built from (recorded in the step)."""
        ...

    def act(self, text: str) -> EnvAction | ToolResult:
        """What to do with the policy's completion."""
        ...

    def observe(self, observation: Any, reward: float, info: dict[str, Any]) -> None:
        """The environment's answer to the last `EnvAction`."""
        ...


def to_observation(raw: Any) -> Observation:
    """The `Observation` contract of an environment's observation: a string is the text; a dict's keys that name a
    contract field (`text`, `image`, `url`, `last_action_error`) fill it, other JSON-friendly keys go to `info`."""
    if not isinstance(raw, dict):
        return Observation(text=str(raw))
    fields: dict[str, Any] = {"text": str(raw.get("text", ""))}
    if isinstance(raw.get("image"), bytes):
        fields["image"] = raw["image"]
    for key in ("url", "last_action_error"):
        if isinstance(raw.get(key), str) and raw[key]:
            fields[key] = raw[key]
    extra = {k: v for k, v in raw.items() if k not in Observation.model_fields and _plain_value(v)}
    return Observation(**fields, info=extra)


def _plain_value(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


class ChatLoop:
    """The default loop: the run's `PromptFormat` over (instruction, current observation text, earlier turns);
    every completion is an environment action. It takes no kwargs; a subclass that does declares its `Settings`."""

    Settings: type[BaseModel] = NoSettings

    def __init__(self, task: Task, observation: Any, context: LoopContext) -> None:
        self.task, self.context = task, context
        self.current = to_observation(observation)
        self.history: list[Turn] = []
        self._last_action = ""

    def messages(self) -> list[dict[str, str]]:
        return self.context.prompt_format.messages(self.task.instruction, self.current.text, self.history)

    def prompt(self) -> Prompt:
        return Prompt(encode_prompt(self.context.tokenizer, self.messages()))

    def observation(self) -> Observation:
        return self.current

    def act(self, text: str) -> EnvAction | ToolResult:
        self._last_action = text
        return EnvAction(text)

    def observe(self, observation: Any, reward: float, info: dict[str, Any]) -> None:
        self.advance(to_observation(observation))

    def advance(self, new: Observation) -> None:
        """Record the turn just played, with the environment's error for its action (`new.last_action_error`),
        and make `new` the current observation (for loops that build their own `Observation`)."""
        error = new.last_action_error or ""
        self.history.append(Turn(observation=self.current.text, action=self._last_action, error=error))
        self.current = new
