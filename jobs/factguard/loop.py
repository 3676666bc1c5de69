"""FactGuard's agent loop and tool actors: tool calls are agent-side, answered by Ray actors.

    rollout:
      agent:
        entry: raygent.jobs.factguard.loop:FactGuardLoop
        kwargs: {budgets: {retrieve: 2, analyze_clip: 2}, placement: ray}     # FactGuardLoop.Settings

`FactGuardLoop` is a `ChatLoop` whose `act` parses the completion: a `retrieve(...)` or `analyze_clip(...)` call is
answered by the tools (within the episode's budgets) and returned as a `ToolResult` (a trained step, no
environment step); the answer becomes the next observation in the loop's own context, exactly as the environment
would have shown it, so prompts match the oracle's demonstrations. A verdict (or anything unparsable) is an
environment action.

The tools live in two named Ray actors per world (`RetrieverActor`: the BM25 index; `ClipAnalyzerActor`), created by
the first rollout worker that needs them and shared by all (`get_if_exists`). A call to an actor that died is
retried on a fresh one (Ray restarts it, `max_restarts`; a handle whose owner died is looked up again). Without a
running Ray (unit tests, a notebook), or with `placement: local`, the loop uses `LocalTools` in process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from raygent.environments.factguard.tools import (
    DEFAULT_BUDGETS,
    ActionError,
    ClipAnalyzer,
    EpisodeTools,
    LocalTools,
    Retriever,
    ToolBackend,
    ToolCall,
    check_budgets,
    parse_action,
)
from raygent.platform.contracts import Observation, Task
from raygent.platform.rl.agent_loop import ChatLoop, EnvAction, LoopContext, ToolResult, to_observation
from raygent.policies.prompts import Turn

ACTOR_PREFIX = "factguard"
_RETRIES = 3


class LoopSettings(BaseModel):
    """`rollout.agent.kwargs` of `FactGuardLoop` (its `Settings`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    budgets: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_BUDGETS))
    """Calls per tool and episode (a call over budget is answered with an error and still counts)."""
    placement: Literal["ray", "local"] = "ray"
    """`ray`: the tool actors (in process when Ray is not running); `local`: always in process."""

    @field_validator("budgets")
    @classmethod
    def _budgets(cls, value: dict[str, int]) -> dict[str, int]:
        return check_budgets(value)


class RetrieverActor:
    """The BM25 retriever of one world in a Ray actor."""

    def __init__(self, world_seed: int) -> None:
        self.retriever = Retriever(world_seed)

    def retrieve(self, query: str) -> str:
        return self.retriever.retrieve(query)


class ClipAnalyzerActor:
    """The clip analyzer in a Ray actor (stateless: each call carries the video's frames)."""

    def __init__(self) -> None:
        self.analyzer = ClipAnalyzer()

    def analyze(self, frames: list[str], start: int, end: int) -> str:
        return self.analyzer.analyze(frames, start, end)


class RayTools:
    """`ToolBackend` over the two named tool actors of world `world_seed` (created on first use)."""

    def __init__(self, world_seed: int) -> None:
        self.world_seed = world_seed
        self._handles: dict[str, Any] = {}

    def _actor(self, kind: str) -> Any:
        import ray

        if kind not in self._handles:
            name = f"{ACTOR_PREFIX}-{kind}-{self.world_seed}" if kind == "retriever" else f"{ACTOR_PREFIX}-{kind}"
            cls, args = (RetrieverActor, (self.world_seed,)) if kind == "retriever" else (ClipAnalyzerActor, ())
            options = {"name": name, "get_if_exists": True, "num_cpus": 0, "max_restarts": 3, "max_task_retries": 3}
            self._handles[kind] = ray.remote(cls).options(**options).remote(*args)
        return self._handles[kind]

    def _call(self, kind: str, method: str, *args: Any) -> str:
        import ray
        from ray.exceptions import RayActorError

        for attempt in range(_RETRIES):
            try:
                return str(ray.get(getattr(self._actor(kind), method).remote(*args)))
            except RayActorError:  # its owner (another worker) died with it: look it up or create it again
                self._handles.pop(kind, None)
                if attempt == _RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def retrieve(self, query: str) -> str:
        return self._call("retriever", "retrieve", query)

    def analyze(self, frames: Sequence[str], start: int, end: int) -> str:
        return self._call("analyzer", "analyze", list(frames), start, end)


_BACKENDS: dict[tuple[str, int], ToolBackend] = {}


def tool_backend(placement: str, world_seed: int) -> ToolBackend:
    """The process's tool backend for `world_seed`: the actors when Ray runs and `placement` is `ray`, else local."""
    import ray

    kind = "ray" if placement == "ray" and ray.is_initialized() else "local"
    key = (kind, world_seed)
    if key not in _BACKENDS:
        _BACKENDS[key] = RayTools(world_seed) if kind == "ray" else LocalTools(world_seed)
    return _BACKENDS[key]


class FactGuardLoop(ChatLoop):
    """The default chat loop with agent-side tools (module docstring)."""

    current: Observation

    Settings = LoopSettings

    def __init__(self, task: Task, observation: Any, context: LoopContext, **kwargs: Any) -> None:
        super().__init__(task, observation, context)
        settings = LoopSettings.model_validate(kwargs)
        backend = tool_backend(settings.placement, int(task.params.get("world_seed", 0)))
        enabled = bool(task.params.get("tools", True))
        self.tools = EpisodeTools(backend, task.params["frames"], settings.budgets, enabled)

    def act(self, text: str) -> EnvAction | ToolResult:
        try:
            move = parse_action(text)
        except ActionError:
            return super().act(text)  # the environment answers malformed actions (and counts them)
        if not isinstance(move, ToolCall):
            return super().act(text)
        result = self.tools.call(move)
        self.history.append(Turn(observation=self.current.text, action=text))
        self.current = to_observation(result)
        return ToolResult(move.name, result)
