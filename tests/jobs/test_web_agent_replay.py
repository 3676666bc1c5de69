"""The web agent's hindsight replay (`jobs/web_agent/replay.py`): relabeling and the replay buffer, as pure code."""

from __future__ import annotations

import json

import pytest

from raygent.jobs.web_agent import replay as hindsight
from raygent.platform.contracts import Observation, Step, Task, Trajectory


def _acted(
    text: str, action: str, achieved: list[list[str]] | None = None, valid: bool = True, error: str | None = None
) -> Step:
    info = {"hindsight": json.dumps(achieved)} if achieved else {}
    return Step(
        observation=Observation(text=text, last_action_error=error),
        prompt_ids=[1],
        response_ids=[2],
        logprobs=[-0.1],
        action=action,
        valid_action=valid,
        info=info,
        policy_version=0,
    )


def test_hindsight_relabels_achieved_goals_into_their_effective_demonstrations() -> None:
    task = Task(id="own", env="e", instruction="Do the asked thing.")
    long_way = Trajectory(
        task=task,
        steps=[
            _acted("s0", "garbage", valid=False),  # did not parse: dropped
            _acted("s0", "click(99)"),  # refused by the environment (the next observation says so): dropped
            _acted("s0", "a", error="no element 99"),
            _acted("s1", "b"),
            _acted("s2", "c", [["mute/1", "Mute."], ["own/2", task.instruction]]),
            _acted("s3", "d", [["next/1", "Next."]]),
        ],
        success=False,
        group_id="g",
    )
    short_way = Trajectory(
        task=task,
        steps=[_acted("s0", "x", [["mute/7", "Mute."]]), _acted("s1", "y", [["loop/3", "Loop."]])],
        success=False,
        group_id="g",
    )
    lost = Trajectory(task=task, steps=[_acted("s0", "z", [["fast/1", "Faster."]])], group_id="g", infra_failure=True)
    relabeled = hindsight.relabel([long_way, short_way, lost])
    # the episode's own goal and an infrastructure failure's steps are not relabeled; the buffer picks among the rest
    assert [(t.instruction, turns) for t, turns in relabeled] == [
        ("Mute.", [("s0", "a"), ("s1", "b"), ("s2", "c")]),
        ("Next.", [("s0", "a"), ("s1", "b"), ("s2", "c"), ("s3", "d")]),
        ("Mute.", [("s0", "x")]),
        ("Loop.", [("s0", "x"), ("s1", "y")]),
    ]
    assert relabeled[2][0].id == "mute/7" and relabeled[2][0].env == "e"
    assert hindsight.relabel([Trajectory(task=task, steps=[_acted("s", "a")], group_id="g")]) == []


def test_hindsight_buffer_keeps_the_shortest_demo_per_goal_across_batches_and_round_trips() -> None:
    buffer = hindsight.HindsightBuffer()
    mute_long = (Task(id="mute/1", env="e", instruction="Mute."), [("s0", "a"), ("s1", "b")])
    mute_short = (Task(id="mute/7", env="e", instruction="Mute."), [("s0", "x")])
    loop = (Task(id="loop/3", env="e", instruction="Loop."), [("s0", "y")])
    assert buffer.add([mute_long]) == 1
    assert buffer.add([mute_short, loop]) == 2
    assert buffer.add([mute_long]) == 0  # longer than the one kept
    assert buffer.demonstrations() == [loop, mute_short]
    assert sorted(buffer.sample(5, seed=0), key=lambda demo: demo[0].id) == [loop, mute_short]
    one = buffer.sample(1, seed=3)
    assert len(one) == 1 and one == buffer.sample(1, seed=3)
    restored = hindsight.HindsightBuffer()
    restored.load_state(json.loads(json.dumps(buffer.state())))
    assert restored.demonstrations() == buffer.demonstrations()
    # families take turns: one family's many instructions do not crowd out another's single one
    buffer.add([(Task(id=f"play/{i}", env="e", instruction=f"Play track {i}."), [("s0", "z")]) for i in range(9)])
    for seed in range(5):
        three = buffer.sample(3, seed=seed)
        assert sorted(hindsight.family(task) for task, _ in three) == ["loop", "mute", "play"]


def test_hindsight_buffer_keeps_several_distinct_shortest_demos_per_goal() -> None:
    buffer = hindsight.HindsightBuffer(per_goal=2)
    mute = Task(id="mute/1", env="e", instruction="Mute.")
    three, one, two = [("a", "x"), ("b", "y"), ("c", "z")], [("p", "x")], [("q", "x"), ("r", "y")]
    assert buffer.add([(mute, three), (mute, one), (mute, list(one))]) == 2  # the copy of `one` is not kept again
    assert buffer.add([(mute, two)]) == 1  # shorter than `three`, which it replaces
    assert buffer.add([(mute, three)]) == 0
    assert [turns for _, turns in buffer.demonstrations()] == [one, two] and len(buffer) == 2
    restored = hindsight.HindsightBuffer(per_goal=2)
    restored.load_state(json.loads(json.dumps(buffer.state())))
    assert restored.demonstrations() == buffer.demonstrations()
    with pytest.raises(ValueError, match="per_goal"):
        hindsight.HindsightBuffer(per_goal=0)
