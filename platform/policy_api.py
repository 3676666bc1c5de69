"""The policy routes of an agent run's Serve app: `POST /v1/act` and an OpenAI-compatible
`POST /v1/chat/completions`, over the run's trained checkpoint (`RUN_DIR/checkpoints/final`).

Requests are pydantic models, so a malformed body is a 422; `BodyLimit` answers 413 for bodies over the limit
before they are parsed; neither reaches the model, so neither can crash the replica. `/v1/act` builds the prompt
with the run's own prompt format and decodes with the run's evaluation sampling (`rollout.eval_sampling`: stop
strings, token limit, greedy), exactly as its evaluation episodes did; a request's `temperature` and
`max_new_tokens` override those two. It returns the policy's action text.

When the run's environment class declares its `action_grammar` (the web environments do), the answer is
parsed with it; when the requested decoding does not parse, `attempts - 1` samples at temperature 1 (one seeded
batch) are drawn and the first that parses is returned. `valid` says whether the returned action parses (None:
the environment declares no grammar). An agent behind an endpoint should not hand its caller an action the
environment would refuse when it has a valid one among its samples.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any, Literal

import gymnasium
from pydantic import BaseModel, ConfigDict, Field
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from raygent.platform.config import load_entry
from raygent.platform.rl.checkpoint import CHECKPOINTS, FINAL, STATE_FILE
from raygent.platform.rundir import load_run_config
from raygent.policies.actions import ActionGrammar, InvalidAction
from raygent.policies.backends import InferenceBackend, SamplingParams, make_backend
from raygent.policies.loading import load_tokenizer
from raygent.policies.prompts import ChatMessage, PromptFormat, Turn, encode_prompt, render_prompt

DEFAULT_MAX_BODY_BYTES = 64 * 1024


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ActTask(Strict):
    instruction: str = Field(min_length=1, max_length=4000)
    id: str | None = None


class ActObservation(Strict):
    text: str = Field(max_length=32_000)
    url: str | None = None
    last_action_error: str | None = None


class ActRequest(Strict):
    """An observation of an episode in progress: the task, what the agent sees now, and earlier turns."""

    task: ActTask
    observation: ActObservation
    history: list[Turn] = Field(default_factory=list, max_length=64)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_new_tokens: int | None = Field(default=None, ge=1, le=1024)
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


class ChatRequest(BaseModel):
    """The OpenAI chat-completions request fields this server honours (others are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")
    model: str = "raygent"
    messages: list[ChatMessage] = Field(min_length=1, max_length=256)
    max_tokens: int | None = Field(default=None, ge=1, le=4096)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=4096)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    stop: str | list[str] | None = None
    n: Literal[1] = 1
    seed: int | None = None


class BodyLimit(BaseHTTPMiddleware):
    """413 for request bodies over `max_bytes` (by Content-Length, or by reading a chunked body)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        declared = request.headers.get("content-length")
        too_big = declared is not None and declared.isdigit() and int(declared) > self.max_bytes
        if not too_big and request.method in {"POST", "PUT", "PATCH"}:
            too_big = len(await request.body()) > self.max_bytes
        if too_big:
            return JSONResponse({"detail": f"request body over {self.max_bytes} bytes"}, status_code=413)
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
    ) -> None:
        self.backend: InferenceBackend = make_backend(backend, checkpoint, version=version)
        self.tokenizer = load_tokenizer(checkpoint)
        self.prompt_format = prompt_format
        self.sampling = sampling or SamplingParams(temperature=0.0, max_new_tokens=64)
        self.grammar = grammar

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
        return cls(final, prompt, int(state.get("version", 0)), backend, sampling, env_grammar(config))

    def act(self, request: ActRequest) -> ActResponse:
        messages = self.prompt_format.messages(request.task.instruction, request.observation.text, request.history)
        chosen = {"temperature": request.temperature, "max_new_tokens": request.max_new_tokens}
        params = self.sampling.model_copy(update={k: v for k, v in chosen.items() if v is not None})
        prompt = encode_prompt(self.tokenizer, messages)
        completion = self.backend.generate([prompt], params)[0]
        valid, attempts = (None if self.grammar is None else self._parses(completion.text)), 1
        if valid is False and request.attempts > 1:  # one batched call for the other samples, seeded
            resample = params.model_copy(update={"temperature": 1.0, "seed": 0})
            samples = self.backend.generate([prompt] * (request.attempts - 1), resample)
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

    def chat(self, request: ChatRequest) -> dict[str, Any]:
        stops = (request.stop,) if isinstance(request.stop, str) else tuple(request.stop or ())
        params = SamplingParams(
            temperature=request.temperature,
            top_p=request.top_p,
            max_new_tokens=request.max_completion_tokens or request.max_tokens or 128,
            stop=stops,
            seed=request.seed,
        )
        prompt = encode_prompt(self.tokenizer, request.messages)
        completion = self.backend.generate([prompt], params)[0]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": completion.text},
                    "finish_reason": completion.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": len(completion.prompt_ids),
                "completion_tokens": len(completion.response_ids),
                "total_tokens": len(completion.prompt_ids) + len(completion.response_ids),
            },
            "system_fingerprint": f"raygent-v{completion.policy_version}",
        }

    def render(self, messages: list[ChatMessage]) -> str:
        return render_prompt(self.tokenizer, messages)
