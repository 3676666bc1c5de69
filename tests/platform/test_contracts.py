"""The RL contracts: validation rules, derived fields, and round trips through JSON and pickle."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
from pydantic import ValidationError

from raygent.platform.contracts import Judgement, Observation, Step, Task, Trajectory, TrajectoryGroup

from conftest import ROOT

TASK = Task(id="kv-3", env="kv_lookup", instruction="Find the value of key 'a'.", difficulty=2, params={"seed": 3})
PNG_HEADER = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"  # not valid UTF-8: must survive JSON as base64


def make_step(version: int = 0, reward: float = 0.0, n_tokens: int = 2) -> Step:
    return Step(
        observation=Observation(text="[1] button 'OK'", image=PNG_HEADER, url="http://127.0.0.1:8000/"),
        prompt_ids=[1, 2, 3],
        response_ids=list(range(10, 10 + n_tokens)),
        logprobs=[-0.5] * n_tokens,
        action="click(1)",
        reward=reward,
        policy_version=version,
    )


def make_trajectory(rewards: list[float], versions: list[int] | None = None, group_id: str = "g0") -> Trajectory:
    versions = versions or [0] * len(rewards)
    steps = [make_step(version=v, reward=r) for r, v in zip(rewards, versions, strict=True)]
    return Trajectory(task=TASK, steps=steps, success=rewards[-1] > 0, group_id=group_id)


def test_task_is_frozen_and_strict() -> None:
    assert Task(id="t", env="e", instruction="do").difficulty == 0
    with pytest.raises(ValidationError):
        TASK.id = "other"
    with pytest.raises(ValidationError, match="extra"):
        Task(id="t", env="e", instruction="do", level=1)
    with pytest.raises(ValidationError):
        Task(id="t", env="e", instruction="do", difficulty=-1)


def test_step_needs_one_logprob_per_response_token() -> None:
    good = make_step()
    data = good.model_dump()
    with pytest.raises(ValidationError, match="len\\(response_ids\\) = 2 but len\\(logprobs\\) = 1"):
        Step.model_validate({**data, "logprobs": [-0.1]})
    with pytest.raises(ValidationError, match="not a log-probability"):
        Step.model_validate({**data, "logprobs": [-0.1, 0.3]})
    with pytest.raises(ValidationError):  # a sampled token cannot have probability 0
        Step.model_validate({**data, "logprobs": [-0.1, float("-inf")]})
    with pytest.raises(ValidationError):
        Step.model_validate({**data, "reward": float("nan")})
    with pytest.raises(ValidationError):
        Step.model_validate({**data, "prompt_ids": []})
    assert Step.model_validate({**data, "response_ids": [], "logprobs": []}).response_ids == []


def test_trajectory_version_is_the_oldest_steps() -> None:
    trajectory = make_trajectory([0.0, 0.5, 1.0], versions=[4, 3, 5])
    assert trajectory.policy_version == 3
    assert trajectory.total_reward == 1.5
    with pytest.raises(ValidationError, match="oldest step's version is 3"):
        Trajectory(task=TASK, steps=trajectory.steps, policy_version=5, group_id="g0")


def test_trajectory_without_steps_must_be_an_infra_failure() -> None:
    with pytest.raises(ValidationError, match="infra_failure"):
        Trajectory(task=TASK, steps=[], policy_version=0, group_id="g0")
    failed = Trajectory(task=TASK, steps=[], policy_version=7, group_id="g0", infra_failure=True, infra_retries=2)
    assert failed.policy_version == 7 and failed.total_reward == 0.0
    with pytest.raises(ValidationError):  # no steps to take the version from
        Trajectory(task=TASK, steps=[], group_id="g0", infra_failure=True)


def test_group_helpers() -> None:
    group = TrajectoryGroup(
        group_id="g0",
        task=TASK,
        trajectories=[make_trajectory([0.0, 1.0], versions=[2, 2]), make_trajectory([0.0], versions=[1])],
    )
    assert group.rewards == [1.0, 0.0]
    assert group.policy_version == 1
    assert not group.is_zero_variance()
    flat = TrajectoryGroup(group_id="g0", task=TASK, trajectories=[make_trajectory([0.3]), make_trajectory([0.3])])
    assert flat.is_zero_variance()
    near = TrajectoryGroup(group_id="g0", task=TASK, trajectories=[make_trajectory([0.3]), make_trajectory([0.31])])
    assert not near.is_zero_variance() and near.is_zero_variance(atol=0.02)


def test_group_members_must_share_group_and_task() -> None:
    with pytest.raises(ValidationError, match="group_id = 'g1', expected 'g0'"):
        TrajectoryGroup(group_id="g0", task=TASK, trajectories=[make_trajectory([1.0], group_id="g1")])
    other = TASK.model_copy(update={"id": "kv-4"})
    with pytest.raises(ValidationError, match="is for task 'kv-3', not 'kv-4'"):
        TrajectoryGroup(group_id="g0", task=other, trajectories=[make_trajectory([1.0])])
    with pytest.raises(ValidationError):
        TrajectoryGroup(group_id="g0", task=TASK, trajectories=[])


def test_group_round_trips_through_json_and_pickle() -> None:
    trajectory = make_trajectory([0.0, 1.0], versions=[3, 4]).model_copy(update={"truncated": True})
    group = TrajectoryGroup(group_id="g0", task=TASK, trajectories=[trajectory, make_trajectory([0.0])])
    text = group.model_dump_json()
    back = TrajectoryGroup.model_validate_json(text)
    assert back == group
    assert back.trajectories[0].steps[0].observation.image == PNG_HEADER
    assert back.trajectories[0].truncated and back.trajectories[0].policy_version == 3
    assert pickle.loads(pickle.dumps(group)) == group  # how Ray's object store moves it


def test_judgement_round_trip() -> None:
    judgement = Judgement(score=0.75, success=True, reason="file created", info={"first_error_step": None})
    assert Judgement.model_validate_json(judgement.model_dump_json()) == judgement
    with pytest.raises(ValidationError):
        Judgement(score=float("inf"), success=False)


def test_contracts_do_not_import_torch() -> None:
    code = "import sys, raygent.platform.contracts; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
