"""From (system, task, observation, history) to chat messages, prompt text and prompt token ids.

A multi-turn episode becomes one chat:

    system     PromptFormat.system + the grammar's action list
    user       "Task: <instruction>\\n\\nObservation:\\n<first observation>"  (task_position "first")
    assistant  <first action>
    user       "Observation:\\n<next observation>"
    ...        (one assistant/user pair per earlier turn)
    user       the current observation (then "\\n\\nTask: <instruction>" with task_position "last");
               then the generation prompt

With `framing: chat` the prompt is exactly the task's messages, as TRL and the OpenAI API take them: no system
message (unless `system` is given), no `Task:`/`Observation:` prefixes:

    user       <instruction>  (then "\\n\\n<first observation>" when that observation is not empty)
    assistant  <first action>
    user       <next observation>
    ...

`render_prompt` writes it with the tokenizer's chat template when it has one (tokenizers made by
`raygent.policies.tokenizer`, Qwen2.5, UI-TARS) and with `PLAIN_TEMPLATE`'s `### Role` blocks otherwise (base
models). `encode_prompt` gives the token ids an engine takes: the chat-template text already holds the model's
special tokens, so it is encoded without adding any; plain text is encoded with the tokenizer's own
`add_special_tokens` convention (e.g. Llama's BOS).

Each step's prompt is rendered afresh from the text history. Only the prompt is re-tokenized: the trainer learns
from the response ids the engine recorded (docs/design.md §3), and history actions are the parsed canonical actions, so
prompt tokens never need to match earlier responses token for token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from transformers import PreTrainedTokenizerBase

from raygent.policies.actions import ActionGrammar

DEFAULT_SYSTEM = (
    "You are an agent that completes tasks step by step. Each turn you see an observation and reply with "
    "exactly one action."
)
PLAIN_TEMPLATE = "### {role}\n{content}\n\n"
"""One message of the plain format (role capitalised); the generation prompt is `### Assistant\\n`."""
ERROR_CHARS = 200
"""How much of an environment's error a `Last action:` line quotes."""


class ChatMessage(BaseModel):
    """One chat message, in the `{"role", "content"}` shape chat templates take."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class Turn(BaseModel):
    """An earlier turn of the episode: what the agent observed and the action it replied with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    observation: str
    action: str
    error: str = ""
    """The environment's error for `action` ("" when it raised none), shown by `PromptFormat.last_action`."""


class PromptFormat(BaseModel):
    """How an agent prompt is laid out; a config block mirrors it.

    `max_history` keeps only the latest turns (None keeps all). `task_position` says where the task instruction
    goes: `first`, before the first user message that remains (the usual chat layout), or `last`, after the
    current observation, right before the answer. `last` keeps the instruction at the same distance from the
    answer whatever the observation's length; a small model trained from scratch conditioned on a `first`
    instruction poorly when screens of one app differed in length (another playlist).

    `last_action` puts a `Last action: <action>` line (with ` (error: <the environment's error>)` when it raised
    one; `none` on the first turn) above the current observation, whatever `max_history` keeps: an agent whose
    prompt holds only the current screen can then tell that it already opened the menu it is looking at.

    `framing` says how the messages are worded: `agent` (the default) opens with the system message (`system`,
    None: `DEFAULT_SYSTEM`) and prefixes the instruction and observations with `task_prefix` and
    `observation_prefix`; `chat` renders exactly the task's own text: the instruction is the first user message
    (followed by the first observation when that is not empty), later observations are user messages as they are,
    and there is no system message unless `system` is given (the tokenizer's chat template may still add its own
    default, as it does for any caller). A single-turn task written for TRL (a prompt and a reward) is the same
    prompt here. `max_history`, `task_position` and `last_action` apply to both framings.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    framing: Literal["agent", "chat"] = "agent"
    system: str | None = None
    """The system message; None: `DEFAULT_SYSTEM` with `framing: agent`, none with `framing: chat`."""
    task_prefix: str = "Task: "
    observation_prefix: str = "Observation:\n"
    actions_header: str = "Actions:"
    max_history: int | None = Field(default=None, ge=0)
    task_position: Literal["first", "last"] = "first"
    last_action: bool = False

    def system_text(self, grammar: ActionGrammar | None = None) -> str | None:
        """The system message: `system` (see its default), then the grammar's actions when given; None when
        there is none (`framing: chat` without `system` or grammar)."""
        system = self.system if self.system is not None else (DEFAULT_SYSTEM if self.framing == "agent" else None)
        if grammar is None:
            return system
        actions = f"{self.actions_header}\n{grammar.describe()}"
        return actions if system is None else f"{system}\n\n{actions}"

    def messages(
        self,
        instruction: str,
        observation: str,
        history: Sequence[Turn] = (),
        grammar: ActionGrammar | None = None,
    ) -> list[ChatMessage]:
        """The chat for the next action: system, the (trimmed) history, then the current observation."""
        kept = list(history) if self.max_history is None else list(history)[len(history) - self.max_history :]
        observations = [turn.observation for turn in kept] + [observation]
        system = self.system_text(grammar)
        messages = [] if system is None else [ChatMessage(role="system", content=system)]
        agent = self.framing == "agent"
        task = f"{self.task_prefix}{instruction}" if agent else instruction
        last = len(observations) - 1
        for index, text in enumerate(observations):
            content = f"{self.observation_prefix}{text}" if agent else text
            if index == last and self.last_action:
                content = _joined(last_action_line(history[-1] if history else None), content, "\n", agent)
            if index == 0 and self.task_position == "first":
                content = _joined(task, content, "\n\n", agent)
            if index == last and self.task_position == "last":
                content = _joined(content, task, "\n\n", agent)
            messages.append(ChatMessage(role="user", content=content))
            if index < len(kept):
                messages.append(ChatMessage(role="assistant", content=kept[index].action))
        return messages


def _joined(first: str, second: str, separator: str, keep_empty: bool) -> str:
    """`first`, `separator`, `second`; with `keep_empty` False (chat framing) an empty part and its separator are
    left out, so a task with an empty observation is exactly its instruction."""
    if keep_empty or (first and second):
        return f"{first}{separator}{second}"
    return first or second


def last_action_line(turn: Turn | None) -> str:
    """`Last action: …` for the turn before the current observation (`PromptFormat.last_action`)."""
    if turn is None:
        return "Last action: none"
    error = f" (error: {turn.error[:ERROR_CHARS]})" if turn.error else ""
    return f"Last action: {turn.action.strip()}{error}"


def has_chat_template(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether `render_prompt` will use the tokenizer's chat template."""
    return bool(getattr(tokenizer, "chat_template", None))


def render_plain(messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
    """The plain format: one `### Role` block per message, then `### Assistant` when asked for."""
    text = "".join(PLAIN_TEMPLATE.format(role=m.role.capitalize(), content=m.content) for m in messages)
    return text + "### Assistant\n" if add_generation_prompt else text


def render_prompt(
    tokenizer: PreTrainedTokenizerBase, messages: Sequence[ChatMessage], add_generation_prompt: bool = True
) -> str:
    """The prompt text: the tokenizer's chat template when it has one, else `render_plain`."""
    if has_chat_template(tokenizer):
        text = tokenizer.apply_chat_template(
            [message.model_dump() for message in messages], tokenize=False, add_generation_prompt=add_generation_prompt
        )
        if not isinstance(text, str):
            raise TypeError(f"apply_chat_template returned {type(text).__name__}, expected str")
        return text
    return render_plain(messages, add_generation_prompt)


def encode_prompt(
    tokenizer: PreTrainedTokenizerBase, messages: Sequence[ChatMessage], add_generation_prompt: bool = True
) -> list[int]:
    """The prompt token ids for an engine (see the module docstring for special tokens)."""
    text = render_prompt(tokenizer, messages, add_generation_prompt)
    ids = tokenizer.encode(text, add_special_tokens=not has_chat_template(tokenizer))
    return [int(token) for token in ids]
