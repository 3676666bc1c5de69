"""The policy routes of an agent run's Serve app: `POST /v1/act` and OpenAI's chat-completions API
(`POST /v1/chat/completions`, `GET /v1/models`, `GET /v1/models/{id}`), over the run's trained checkpoint
(`RUN_DIR/checkpoints/final`).

Requests are pydantic models, so a malformed body is a 422 and never reaches the model; `BodyLimit` answers 413
for bodies over the limit (`raygent serve --max-body-kb`, default 1 MiB) before they are parsed; a prompt that
does not fit the model's context with the requested completion is a 400 naming both numbers. Every error is in
OpenAI's format (`{"error": {"message", "type", "param", "code"}}`, see `serving.py`), so clients show the
message, not only the status.

`/v1/act` builds the prompt with the run's own prompt format and decodes with the run's evaluation sampling
(`rollout.eval_sampling`: stop strings, token limit, greedy), exactly as its evaluation episodes did; a request's
`temperature` and `max_new_tokens` override those two. It returns the policy's action text. When the run's
environment class declares its `action_grammar` (the web environments do), the answer is parsed with it; when
the requested decoding does not parse, `attempts - 1` samples at temperature 1 (one seeded batch) are drawn and
the first that parses is returned. `valid` says whether the returned action parses (None: no grammar).

Chat completions, and how they map onto a policy trained as an agent:

- roles `system`, `developer` (rendered as `system`), `user`, `assistant` and `tool` (a tool's result is what the
  agent saw as an observation: rendered as a `user` turn); `name` and `tool_call_id` are accepted; an assistant
  turn's `tool_calls` are rendered as `name(arguments)` lines of its text; `content` may be a string or a list of
  `text` parts (joined by newlines); image, audio and file parts are refused (400: the policy reads text).
- `n` completions (up to 8) come from one batched backend call; `seed` makes a request reproducible: generation
  holds a lock, because the backends seed the process-wide torch generator (`fork_rng` + `manual_seed`), so two
  concurrent seeded requests would otherwise interleave their draws (10 concurrent identical requests gave 10
  answers). Requests are therefore served one at a time per replica; scale with replicas.
- `stream: true` answers with server-sent events (`chat.completion.chunk`s, then `data: [DONE]`). The backends
  generate a whole completion per call, so the chunks (one per token) are sent once generation is done: the
  format is OpenAI's, the latency is not incremental.
- `logprobs: true` returns each sampled token's log-probability under the sampling temperature (what the
  learner uses); `top_logprobs` above 0 is refused (the backends keep no alternatives).
- `tools`, `functions`, `response_format` other than text, `logit_bias`, penalties other than 0, audio and
  other fields this server cannot honour are refused with a 400 naming the field, never silently ignored.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import gymnasium
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from raygent.platform.config import load_entry
from raygent.platform.rl.checkpoint import CHECKPOINTS, FINAL, STATE_FILE
from raygent.platform.rundir import load_run_config
from raygent.policies.actions import ActionGrammar, InvalidAction
from raygent.policies.backends import Completion, InferenceBackend, SamplingParams, make_backend
from raygent.policies.loading import load_tokenizer
from raygent.policies.prompts import ChatMessage, PromptFormat, Turn, encode_prompt, render_prompt

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
"""1 MiB: room for an accessibility tree and a long history; `raygent serve --max-body-kb` changes it."""
DEFAULT_CHAT_MAX_TOKENS = 128
MAX_N = 8
SEED_RANGE = 2**63
"""OpenAI's `seed` is a signed 64-bit integer; it is mapped into the backends' range by `seed mod 2**63`."""


class APIError(Exception):
    """A request the policy cannot answer as asked: answered with `status` in OpenAI's error format."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


def error_body(message: str, status: int, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        404: "not_found_error",
        413: "invalid_request_error",
        422: "invalid_request_error",
    }.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _utf8(text: str) -> str:
    """Refuse a lone surrogate (a JSON `\\ud800` escape): it is not text and no tokenizer can encode it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"contains a lone surrogate {text[exc.start]!r} at position {exc.start}; send UTF-8 text"
        ) from None
    return text


Text = Annotated[str, AfterValidator(_utf8)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ActTask(Strict):
    instruction: Text = Field(min_length=1, max_length=4000)
    id: Text | None = None


class ActObservation(Strict):
    text: Text
    """Any length the body limit allows; the prompt built from it must fit the model's context (else 400)."""
    url: Text | None = None
    last_action_error: Text | None = None


class ActTurn(Strict):
    observation: Text
    action: Text


class ActRequest(Strict):
    """An observation of an episode in progress: the task, what the agent sees now, and earlier turns."""

    task: ActTask
    observation: ActObservation
    history: list[ActTurn] = Field(default_factory=list, max_length=256)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0, allow_inf_nan=False)
    max_new_tokens: int | None = Field(default=None, ge=1, le=4096)
    """None: the run's `rollout.eval_sampling` value."""
    attempts: int = Field(default=8, ge=1, le=64)
    """Answers drawn at most (the requested decoding, then a batch of samples) for one the grammar parses."""


class ActResponse(Strict):
    action: str
    policy_version: int
    finish_reason: str
    valid: bool | None = None
    """Whether `action` parses under the environment's grammar (None: it declares none)."""
    attempts: int = 1


class TextPart(Strict):
    type: Literal["text"]
    text: Text


class OtherPart(BaseModel):
    """A content part this policy cannot read (image_url, input_audio, file, ...): refused with a 400."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: str


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: Text
    arguments: Text = ""


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    id: Text | None = None
    type: str = "function"
    function: FunctionCall


class ChatInMessage(Strict):
    """One message of OpenAI's chat format (the fields a text policy can use)."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Text | list[TextPart | OtherPart] | None = None
    name: Text | None = Field(default=None, max_length=256)
    tool_call_id: Text | None = None
    tool_calls: list[ToolCall] | None = None
    refusal: Text | None = None

    @model_validator(mode="after")
    def _has_content(self) -> ChatInMessage:
        if self.content is None and not (self.role == "assistant" and (self.tool_calls or self.refusal)):
            raise ValueError(f"a {self.role} message needs content")
        return self

    def text(self, index: int) -> str:
        parts: list[str] = []
        if isinstance(self.content, str):
            parts.append(self.content)
        elif self.content is not None:
            for number, part in enumerate(self.content):
                if isinstance(part, TextPart):
                    parts.append(part.text)
                else:
                    raise APIError(
                        400,
                        f"messages[{index}].content[{number}]: content part type {part.type!r} is not supported; "
                        "this policy reads text (send parts of type 'text')",
                        param=f"messages.{index}.content.{number}.type",
                        code="unsupported_content_part",
                    )
        for call in self.tool_calls or []:
            parts.append(f"{call.function.name}({call.function.arguments})")
        return "\n".join(parts)

    def to_prompt(self, index: int) -> ChatMessage:
        role = {"developer": "system", "tool": "user"}.get(self.role, self.role)
        return ChatMessage(role=role, content=self.text(index))


class StreamOptions(Strict):
    include_usage: bool = False


_IGNORABLE = {
    "user",
    "metadata",
    "store",
    "service_tier",
    "parallel_tool_calls",
    "prompt_cache_key",
    "safety_identifier",
}
"""Fields with no effect on what a text policy generates: accepted and ignored (as OpenAI does for most)."""


class ChatRequest(BaseModel):
    """OpenAI's chat-completions request. Fields this server cannot honour are refused by `check_supported`."""

    model_config = ConfigDict(extra="allow", frozen=True)
    model: Text = "raygent"
    messages: list[ChatInMessage] = Field(min_length=1, max_length=1024)
    max_tokens: int | None = Field(default=None, ge=1, le=16384)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=16384)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0, allow_inf_nan=False)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, allow_inf_nan=False)
    stop: Annotated[Text, Field(min_length=1)] | list[Annotated[Text, Field(min_length=1)]] | None = Field(
        default=None, max_length=4
    )
    n: int = Field(default=1, ge=1, le=MAX_N)
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    logprobs: bool = False
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    frequency_penalty: float = Field(default=0.0, ge=-2.0, le=2.0, allow_inf_nan=False)
    presence_penalty: float = Field(default=0.0, ge=-2.0, le=2.0, allow_inf_nan=False)
    tool_choice: Any = None
    response_format: dict[str, Any] | None = None

    def check_supported(self) -> None:
        """A 400 naming the first field whose meaning this server cannot honour."""
        extra = sorted(set(self.model_extra or {}) - _IGNORABLE)
        if extra:
            field = extra[0]
            raise APIError(
                400,
                f"{field}: not supported by this server (a text policy trained as an agent); remove it",
                param=field,
                code="unsupported_parameter",
            )
        if self.frequency_penalty or self.presence_penalty:
            field = "frequency_penalty" if self.frequency_penalty else "presence_penalty"
            raise APIError(400, f"{field}: only 0 is supported", param=field, code="unsupported_value")
        if self.top_logprobs:
            raise APIError(
                400,
                "top_logprobs: only 0 is supported (the backends keep the sampled token's log-probability only)",
                param="top_logprobs",
                code="unsupported_value",
            )
        if self.tool_choice not in (None, "none"):
            raise APIError(400, "tool_choice: only 'none' is supported", param="tool_choice", code="unsupported_value")
        if self.response_format is not None and self.response_format.get("type") != "text":
            raise APIError(
                400,
                f"response_format: only {{'type': 'text'}} is supported, got {self.response_format!r}",
                param="response_format",
                code="unsupported_value",
            )
        if self.stream_options is not None and not self.stream:
            raise APIError(400, "stream_options: only with stream: true", param="stream_options")


class BodyLimit(BaseHTTPMiddleware):
    """413 for request bodies over `max_bytes` (by Content-Length, or by reading a chunked body).

    An oversized body declared by Content-Length is read and dropped (up to `drain_bytes`) before the 413 goes out:
    a server that answers and closes while the client is still sending makes most clients (urllib, requests) fail
    with a broken pipe instead of reading the 413. Bodies declared over `drain_bytes` are answered at once."""

    def __init__(self, app: Any, max_bytes: int, drain_bytes: int = 64 * 1024 * 1024) -> None:
        super().__init__(app)
        self.max_bytes, self.drain_bytes = max_bytes, drain_bytes

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        header = request.headers.get("content-length", "")
        declared = int(header) if header.isdigit() else None
        too_big = declared is not None and declared > self.max_bytes
        if declared is not None and too_big and declared <= self.drain_bytes:
            async for _ in request.stream():
                pass
        elif not too_big and request.method in {"POST", "PUT", "PATCH"}:
            too_big = len(await request.body()) > self.max_bytes
        if too_big:
            message = (
                f"request body over {self.max_bytes} bytes ({self.max_bytes // 1024} KiB), this server's limit; "
                "raise it with raygent serve --max-body-kb (or max_body_bytes in the app's args)"
            )
            return JSONResponse(error_body(message, 413, code="body_too_large"), status_code=413)
        return await call_next(request)


def env_grammar(config: Any) -> ActionGrammar | None:
    """The `action_grammar` the run's environment class declares, or None (no `env` section, or none declared)."""
    env = getattr(config, "env", None)
    if env is None:
        return None
    if env.registration:
        load_entry(env.registration)()
    entry = gymnasium.spec(env.id).entry_point
    grammar = getattr(load_entry(entry) if isinstance(entry, str) else entry, "action_grammar", None)
    return grammar if isinstance(grammar, ActionGrammar) else None


def context_length(checkpoint: Path) -> int | None:
    """The model's context (`max_position_embeddings` of its config.json), or None when it does not say."""
    try:
        config = json.loads((checkpoint / "config.json").read_text())
    except (OSError, ValueError):
        return None
    value = config.get("max_position_embeddings") or config.get("text_config", {}).get("max_position_embeddings")
    return int(value) if isinstance(value, int) and value > 0 else None


class PolicyService:
    """The model behind the routes: a backend on the checkpoint, the run's prompt format and the version."""

    def __init__(
        self,
        checkpoint: Path,
        prompt_format: PromptFormat,
        version: int,
        backend: str = "hf",
        sampling: SamplingParams | None = None,
        grammar: ActionGrammar | None = None,
        model_id: str = "raygent",
    ) -> None:
        self.backend: InferenceBackend = make_backend(backend, checkpoint, version=version)
        self.tokenizer = load_tokenizer(checkpoint)
        self.prompt_format = prompt_format
        self.sampling = sampling or SamplingParams(temperature=0.0, max_new_tokens=64)
        self.grammar = grammar
        self.model_id = model_id
        self.context = context_length(checkpoint)
        self.created = int(checkpoint.stat().st_mtime)
        self._lock = threading.Lock()  # see the module docstring: seeded generation touches the global RNG

    @classmethod
    def from_run(cls, run_dir: Path, backend: str = "hf") -> PolicyService | None:
        """The service over an agent run's final checkpoint, or None when the run has none (a sweep)."""
        final = run_dir / CHECKPOINTS / FINAL
        if not (final / "config.json").is_file():
            return None
        config = load_run_config(run_dir)
        prompt = config.policy.prompt if hasattr(config, "policy") else PromptFormat()
        sampling = config.rollout.eval_sampling if hasattr(config, "rollout") else None
        state = json.loads((final / STATE_FILE).read_text()) if (final / STATE_FILE).is_file() else {}
        grammar = env_grammar(config)
        return cls(final, prompt, int(state.get("version", 0)), backend, sampling, grammar, model_id=config.job)

    # -- models ---------------------------------------------------------------------------------------------

    def model_ids(self) -> list[str]:
        """The served model: the run's job name; `raygent` is accepted as an alias (the request default)."""
        return [self.model_id]

    def model_card(self, model_id: str) -> dict[str, Any]:
        if model_id not in {self.model_id, "raygent"}:
            raise APIError(
                404,
                f"model {model_id!r} does not exist here; this server serves {self.model_id!r} (GET /v1/models)",
                param="model",
                code="model_not_found",
            )
        return {"id": self.model_id, "object": "model", "created": self.created, "owned_by": "raygent"}

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [self.model_card(self.model_id)]}

    # -- generation -----------------------------------------------------------------------------------------

    def _generate(self, prompts: Sequence[list[int]], params: SamplingParams) -> list[Completion]:
        with self._lock:
            return self.backend.generate(prompts, params)

    def _fit(self, prompt: list[int], max_new_tokens: int | None, default: int, param: str) -> int:
        """The completion budget: `max_new_tokens`, or `default` cut to the room left; a 400 when the prompt and
        the requested completion do not fit the model's context."""
        if self.context is None:
            return max_new_tokens or default
        room = self.context - len(prompt)
        if max_new_tokens is None and room >= 1:
            return min(default, room)
        if max_new_tokens is not None and max_new_tokens <= room:
            return max_new_tokens
        if max_new_tokens is None:
            raise APIError(
                400,
                f"this model's context is {self.context} tokens; the prompt alone is {len(prompt)} tokens: "
                "shorten the messages",
                param="messages",
                code="context_length_exceeded",
            )
        raise APIError(
            400,
            f"this model's context is {self.context} tokens; the prompt is {len(prompt)} tokens and {param} asks "
            f"for {max_new_tokens} more ({len(prompt) + max_new_tokens} in all): shorten the messages or lower {param}",
            param="messages" if room < 1 else param,
            code="context_length_exceeded",
        )

    def _encode(self, messages: Sequence[ChatMessage]) -> list[int]:
        if self.context is not None:  # a cheap bound first: no tokenizer makes fewer tokens than 1 per 32 chars
            chars = sum(len(message.content) for message in messages)
            if chars > 32 * self.context:
                raise APIError(
                    400,
                    f"this model's context is {self.context} tokens; the messages hold {chars} characters, "
                    "far more than fits: shorten them",
                    param="messages",
                    code="context_length_exceeded",
                )
        return encode_prompt(self.tokenizer, messages)

    def act(self, request: ActRequest) -> ActResponse:
        history = [Turn(observation=turn.observation, action=turn.action) for turn in request.history]
        if history and request.observation.last_action_error:  # the error of the last turn's action
            history[-1] = history[-1].model_copy(update={"error": request.observation.last_action_error})
        messages = self.prompt_format.messages(request.task.instruction, request.observation.text, history)
        prompt = self._encode(messages)
        budget = self._fit(prompt, request.max_new_tokens, self.sampling.max_new_tokens, "max_new_tokens")
        chosen = {"temperature": request.temperature, "max_new_tokens": budget}
        params = self.sampling.model_copy(update={k: v for k, v in chosen.items() if v is not None})
        completion = self._generate([prompt], params)[0]
        valid, attempts = (None if self.grammar is None else self._parses(completion.text)), 1
        if valid is False and request.attempts > 1:  # one batched call for the other samples, seeded
            resample = params.model_copy(update={"temperature": 1.0, "seed": 0})
            samples = self._generate([prompt] * (request.attempts - 1), resample)
            good = next((i for i, sample in enumerate(samples) if self._parses(sample.text)), None)
            attempts = request.attempts if good is None else good + 2
            if good is not None:
                completion, valid = samples[good], True
        return ActResponse(
            action=completion.text,
            policy_version=completion.policy_version,
            finish_reason=completion.finish_reason,
            valid=valid,
            attempts=attempts,
        )

    def _parses(self, text: str) -> bool:
        assert self.grammar is not None
        return not isinstance(self.grammar.parse(text), InvalidAction)

    def _chat_completions(self, request: ChatRequest) -> tuple[list[Completion], str, int]:
        request.check_supported()
        self.model_card(request.model)
        messages = [message.to_prompt(index) for index, message in enumerate(request.messages)]
        prompt = self._encode(messages)
        asked = request.max_completion_tokens or request.max_tokens
        param = "max_completion_tokens" if request.max_completion_tokens else "max_tokens"
        budget = self._fit(prompt, asked, DEFAULT_CHAT_MAX_TOKENS, param)
        stops = (request.stop,) if isinstance(request.stop, str) else tuple(request.stop or ())
        params = SamplingParams(
            temperature=request.temperature,
            top_p=request.top_p,
            max_new_tokens=budget,
            stop=stops,
            seed=None if request.seed is None else request.seed % SEED_RANGE,
        )
        completions = self._generate([prompt] * request.n, params)
        return completions, f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())

    def _logprobs(self, completion: Completion) -> dict[str, Any]:
        content = []
        for token, logprob in zip(completion.response_ids, completion.logprobs, strict=True):
            text = self.tokenizer.decode([token])
            content.append({"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": []})
        return {"content": content, "refusal": None}

    def chat(self, request: ChatRequest) -> dict[str, Any]:
        completions, request_id, created = self._chat_completions(request)
        prompt_tokens = len(completions[0].prompt_ids)
        completion_tokens = sum(len(c.response_ids) for c in completions)
        return {
            "id": request_id,
            "object": "chat.completion",
            "created": created,
            "model": self.model_id,
            "choices": [
                {
                    "index": index,
                    "message": {"role": "assistant", "content": completion.text, "refusal": None},
                    "logprobs": self._logprobs(completion) if request.logprobs else None,
                    "finish_reason": completion.finish_reason,
                }
                for index, completion in enumerate(completions)
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": f"raygent-v{completions[0].policy_version}",
        }

    def chat_stream(self, request: ChatRequest) -> Iterator[str]:
        """The server-sent events of a streamed chat completion (checked and generated before the first event,
        so a bad request is still an ordinary 4xx)."""
        completions, request_id, created = self._chat_completions(request)
        fingerprint = f"raygent-v{completions[0].policy_version}"
        include_usage = request.stream_options is not None and request.stream_options.include_usage

        def chunk(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> str:
            body: dict[str, Any] = {
                "id": request_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": self.model_id,
                "system_fingerprint": fingerprint,
                "choices": choices,
            }
            if include_usage:
                body["usage"] = usage
            return f"data: {json.dumps(body)}\n\n"

        def events() -> Iterator[str]:
            for index, completion in enumerate(completions):
                yield chunk([{"index": index, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
                for piece, logprob in self._pieces(completion):
                    choice: dict[str, Any] = {"index": index, "delta": {"content": piece}, "finish_reason": None}
                    if request.logprobs:
                        entry = {"token": piece, "logprob": logprob, "bytes": list(piece.encode()), "top_logprobs": []}
                        choice["logprobs"] = {"content": [entry], "refusal": None}
                    yield chunk([choice])
                yield chunk([{"index": index, "delta": {}, "finish_reason": completion.finish_reason}])
            if include_usage:
                prompt_tokens = len(completions[0].prompt_ids)
                completion_tokens = sum(len(c.response_ids) for c in completions)
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                }
                yield chunk([], usage)
            yield "data: [DONE]\n\n"

        return events()

    def _pieces(self, completion: Completion) -> Iterator[tuple[str, float]]:
        """The completion's text cut at token boundaries (decoded incrementally, so multi-byte characters split
        across tokens arrive whole); the pieces join to exactly `completion.text`."""
        emitted = ""
        for count, logprob in enumerate(completion.logprobs, start=1):
            text = self.tokenizer.decode(completion.response_ids[:count], skip_special_tokens=True)
            if text.endswith("\ufffd") or not completion.text.startswith(text) or len(text) <= len(emitted):
                continue
            yield text[len(emitted) :], logprob
            emitted = text
        if len(emitted) < len(completion.text):
            yield completion.text[len(emitted) :], 0.0

    def render(self, messages: list[ChatMessage]) -> str:
        return render_prompt(self.tokenizer, messages)
