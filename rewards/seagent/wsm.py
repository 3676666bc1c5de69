"""SEAgent's World State Model: a reward model that judges a trajectory step by step from its screens.

    reward:
      entry: raygent.rewards.seagent.wsm:WorldStateModel
      kwargs: {backend: lm, model: RUN_DIR/wsm}              # laptop: the fine-tuned yes/no judge
      # kwargs: {backend: vlm, endpoint: http://HEAD:8000/v1, model: Zery/CUA_World_State_Model}   # cluster

Given the task's instruction and the trajectory's screens — the observation before each step and the final
screen (the environment's `info["screen"]` on the last step; the last observation when it gave none) — it
returns one `Judgement` per trajectory with:

- `info["captions"]`: per step, what changed on the screen (`screens.caption`, exact diffs of the
  accessibility text; the VLM writes its own from the frames);
- `step_labels`: `redundant` for a step that changed nothing (and was not `finished()`), else `correct` or
  `error` (the judge's per-step answer);
- `success` (the task is done) and `first_error_step`: on a failure, the first erroneous or redundant step,
  as SEAgent's training data builder takes `min(first error, first redundant)`; a failure with neither stops too
  early, so its last step is the error; on a success none;
- `score`: 1/0 (`score: binary`, default) or the judge's P(done) (`score: probability`).

Backends (one interface, `backend` switches):

- `lm` (laptop): `lm_judge.YesNoScorer` over a causal LM directory fine-tuned on the suite's apps
  (`jobs/seagent/wsm_train.py`): P(yes) of the step question for each step that changed something, and of the
  done question over the caption of the first screen against the final one. Deterministic.
- `vlm` (cluster): one chat request per trajectory to an OpenAI-compatible endpoint (a vLLM server of a VLM, or
  `raygent serve`), SEAgent's judge prompt with each frame's screenshot (when the observation has one) and text
  (`prompt.py`). A malformed answer or a failing endpoint is retried `retries` times; then the judgement is an
  infrastructure failure (`Judgement.infra_failure`): the platform keeps the trajectory out of training, of the
  success rate and of the curriculum. `failures` counts them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from raygent.platform.config import KeyProblem
from raygent.platform.contracts import Judgement, StepLabel, Trajectory
from raygent.rewards.seagent.lm_judge import done_prompt, step_prompt
from raygent.rewards.seagent.prompt import Answer, Frame, MalformedAnswer, judge_messages, parse_answer
from raygent.rewards.seagent.screens import NO_CHANGE, caption

FINAL_SCREEN_KEY = "screen"
"""The last step's `info` key that holds the final screen's text (written by the environment)."""


class WSMSettings(BaseModel):
    """The World State Model's kwargs (`reward.kwargs`); an unknown or bad one is a config error."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["lm", "vlm"] = "lm"
    model: str | None = Field(default=None, min_length=1)
    """`lm`: the judge's model directory (None in a config: the seagent recipe fine-tunes one and fills it in);
    `vlm`: the model name the endpoint serves."""
    endpoint: str | None = None
    """`vlm`: the OpenAI-compatible base URL (`.../v1`)."""
    api_key_env: str | None = None
    """`vlm`: the environment variable holding the endpoint's key, if it needs one."""
    threshold: float = Field(default=0.5, gt=0, lt=1)
    """P(done) above which the task is judged done."""
    step_threshold: float = Field(default=0.5, gt=0, lt=1)
    """P(yes) of the step question below which a step is an error."""
    score: Literal["binary", "probability"] = "binary"
    retries: int = Field(default=2, ge=0)
    timeout_s: float = Field(default=120.0, gt=0)
    max_tokens: int = Field(default=1024, ge=16)
    batch_size: int = Field(default=16, ge=1)
    threads: int | None = Field(default=None, ge=1)
    caption_chars: int = Field(default=400, ge=40)

    @model_validator(mode="after")
    def _vlm_names_its_endpoint(self) -> WSMSettings:
        if self.backend == "vlm":  # its model is the endpoint's, not one a run fine-tunes
            for key in ("endpoint", "model"):
                if getattr(self, key) is None:
                    raise KeyProblem(key, "the vlm backend needs the endpoint and the model it serves")
        return self


def is_finish(action: str) -> bool:
    return action.strip().startswith("finished")


def screens(trajectory: Trajectory) -> list[str]:
    """The screen before each step, then the final screen (see the module docstring)."""
    texts = [step.observation.text for step in trajectory.steps]
    last = trajectory.steps[-1].info.get(FINAL_SCREEN_KEY) if trajectory.steps else None
    return [*texts, str(last) if isinstance(last, str) else (texts[-1] if texts else "")]


def decide(success: bool, labels: list[StepLabel], redundant: Sequence[int] = ()) -> tuple[list[StepLabel], int | None]:
    """The step labels and first error step of a judged trajectory (the rules of the module docstring)."""
    labels = [("redundant" if i in redundant else label) for i, label in enumerate(labels)]
    if success:
        return [label if label == "redundant" else "correct" for label in labels], None
    marked = [i for i, label in enumerate(labels) if label in ("error", "redundant")]
    first = marked[0] if marked else len(labels) - 1
    if labels and labels[first] == "correct":
        labels[first] = "error"
    return labels, first if labels else None


class WorldStateModel:
    """The reward model (see the module docstring); kwargs are `WSMSettings`."""

    Settings = WSMSettings

    def __init__(self, **kwargs: Any) -> None:
        self.settings = WSMSettings(**kwargs)
        self.failures = 0
        self._scorer: Any = None
        if self.settings.model is None:
            raise ValueError(
                "the World State Model needs kwargs.model (the seagent recipe fills in the judge it trains)"
            )

    # ------------------------------------------------------------------ shared

    def captions(self, trajectory: Trajectory) -> list[str]:
        texts = screens(trajectory)
        return [caption(texts[i], texts[i + 1], self.settings.caption_chars) for i in range(len(trajectory.steps))]

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        if self.settings.backend == "lm":
            return self._judge_lm(trajectories)
        return [self._judge_vlm(t) for t in trajectories]

    # ------------------------------------------------------------------ lm

    def scorer(self) -> Any:
        if self._scorer is None:
            from raygent.rewards.seagent.lm_judge import YesNoScorer

            assert self.settings.model is not None
            self._scorer = YesNoScorer(self.settings.model, self.settings.batch_size, self.settings.threads)
        return self._scorer

    def _judge_lm(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        step_prompts: list[str] = []
        asked: list[tuple[int, int]] = []
        done_prompts: list[str] = []
        all_captions = []
        for t_index, trajectory in enumerate(trajectories):
            captions = self.captions(trajectory)
            all_captions.append(captions)
            for s_index, (step, text) in enumerate(zip(trajectory.steps, captions, strict=True)):
                if text != NO_CHANGE and not is_finish(step.action):
                    step_prompts.append(step_prompt(trajectory.task.instruction, step.action, text))
                    asked.append((t_index, s_index))
            texts = screens(trajectory)
            overall = caption(texts[0], texts[-1], self.settings.caption_chars)
            done_prompts.append(done_prompt(trajectory.task.instruction, overall))
        scorer = self.scorer()
        p_steps = scorer.probabilities(step_prompts) if step_prompts else []
        p_done = scorer.probabilities(done_prompts) if done_prompts else []
        per_step: dict[tuple[int, int], float] = dict(zip(asked, p_steps, strict=True))
        judgements = []
        for t_index, trajectory in enumerate(trajectories):
            captions = all_captions[t_index]
            probabilities: list[float | None] = []
            labels: list[StepLabel] = []
            for s_index, step in enumerate(trajectory.steps):
                p = per_step.get((t_index, s_index))
                probabilities.append(p)
                if p is not None:
                    labels.append("correct" if p >= self.settings.step_threshold else "error")
                elif is_finish(step.action):
                    labels.append("correct")
                else:
                    labels.append("redundant")
            done = p_done[t_index]
            success = done >= self.settings.threshold
            labels, first = decide(success, labels)
            score = float(success) if self.settings.score == "binary" else done
            judgements.append(
                Judgement(
                    score=score,
                    success=success,
                    reason=f"wsm lm: P(done)={done:.2f}",
                    step_labels=labels or None,
                    first_error_step=first,
                    info={"captions": captions, "p_done": done, "p_steps": probabilities, "backend": "lm"},
                )
            )
        return judgements

    # ------------------------------------------------------------------ vlm

    def ask(self, messages: list[dict[str, Any]]) -> str:
        """One chat request to the endpoint; the answer's text."""
        import httpx

        settings = self.settings
        key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {"model": settings.model, "messages": messages, "temperature": 0.0, "max_tokens": settings.max_tokens}
        assert settings.endpoint is not None
        response = httpx.post(
            f"{settings.endpoint.rstrip('/')}/chat/completions", json=body, headers=headers, timeout=settings.timeout_s
        )
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])

    def _judge_vlm(self, trajectory: Trajectory) -> Judgement:
        texts = screens(trajectory)
        frames = [
            Frame(text=step.observation.text, action=step.action, image=step.observation.image)
            for step in trajectory.steps
        ]
        frames.append(Frame(text=texts[-1]))
        messages = judge_messages(trajectory.task.instruction, frames)
        problem = ""
        for _ in range(self.settings.retries + 1):
            try:
                answer = parse_answer(self.ask(messages), len(trajectory.steps))
            except MalformedAnswer as error:
                problem = f"malformed answer: {error}"
                continue
            except Exception as error:  # the endpoint failed (connection, HTTP status, a body without choices)
                problem = f"endpoint failed: {type(error).__name__}: {str(error)[:200]}"
                continue
            return self._from_answer(trajectory, answer)
        self.failures += 1
        return Judgement(
            score=0.0,
            success=False,
            reason=f"infrastructure failure: {problem}",
            info={"backend": "vlm", "captions": self.captions(trajectory)},
            infra_failure=True,
        )

    def _from_answer(self, trajectory: Trajectory, answer: Answer) -> Judgement:
        steps = len(trajectory.steps)
        labels: list[StepLabel] = ["correct"] * steps
        if answer.first_error_step is not None:
            labels[answer.first_error_step] = "error"
        labels, first = decide(answer.success, labels, answer.redundant)
        captions = answer.captions or self.captions(trajectory)
        return Judgement(
            score=float(answer.success),
            success=answer.success,
            reason=f"wsm vlm: {answer.error_type}"[:300],
            step_labels=labels or None,
            first_error_step=first,
            info={"captions": captions, "correct_action": answer.correct_action, "backend": "vlm"},
        )


def infra_failed(judgement: Judgement | None) -> bool:
    """Whether a judgement is an infrastructure failure."""
    return judgement is not None and judgement.infra_failure
