"""XSkill's memory actor on Ray: loops in other processes' place read it by name, the hook accumulates real
ToolCalc episodes into it (the frozen agent's batch is withheld from the learner), its snapshot restores into a
fresh actor, and a dead actor degrades a loop to "no context" instead of failing the episode."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from raygent.environments.toolcalc import ToolCalcEnv, demonstrate, make_task
from raygent.jobs.xskill.actor import start_memory
from raygent.jobs.xskill.hook import XSkillHook
from raygent.jobs.xskill.loop import MemoryLoop
from raygent.jobs.xskill.summarize import ProgrammaticSummarizer
from raygent.platform.contracts import Step, Task, Trajectory
from raygent.platform.rl.agent_loop import LoopContext
from raygent.policies.prompts import PromptFormat

pytestmark = pytest.mark.ray


@pytest.fixture
def ray_cluster() -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def episode(task: Task, actions: list[str] | None, group: str, context: LoopContext) -> Trajectory:
    """A ToolCalc episode through `MemoryLoop` (the expert's actions, or the given ones)."""
    env = ToolCalcEnv()
    observation, _ = env.reset(options={"task": task})
    loop = MemoryLoop(task, observation, context, actor="xskill-test")
    actions = actions or demonstrate(task).actions
    steps, success = [], False
    for action in actions:
        steps.append(
            Step(
                observation=loop.observation(),
                prompt_ids=[1],
                response_ids=[2],
                logprobs=[-0.1],
                action=action,
                policy_version=0,
            )
        )
        observation, reward, terminated, truncated, info = env.step(action)
        loop.act(action)
        loop.observe(observation, float(reward), info)
        if terminated or truncated:
            success = bool(info.get("success"))
            break
    return Trajectory(task=task, steps=steps, success=success, group_id=group)


def test_memory_actor_accumulates_snapshots_and_degrades(ray_cluster: None, tmp_path: Path) -> None:
    import ray

    actor = start_memory("xskill-test")
    context = LoopContext(tokenizer=None, prompt_format=PromptFormat())
    hook = XSkillHook(actor, ProgrammaticSummarizer(), tmp_path, rl=False)
    batch = []
    for number, operands in enumerate(([37, 12, 5], [21, 40, 9])):
        task = make_task("a*b+c", operands, 1)
        batch += [episode(task, None, f"g{number}", context) for _ in range(2)]
        batch += [episode(task, [f"answer({operands[0]})"], f"g{number}", context)]
    assert all(t.steps[0].observation.info["xskill"] == "empty" for t in batch)  # nothing learned yet
    assert hook.on_trajectories(1, batch) == []  # frozen: the learner gets nothing
    stats = hook.after_update(1, [], None)
    assert stats["xskill/skills"] == 1 and stats["xskill/experiences"] >= 1 and stats["xskill/context_empty"] == 6
    new = make_task("a*b+c", [11, 13, 2], 1)
    shown = episode(new, None, "g9", context)
    assert shown.success and shown.steps[0].observation.text.startswith("memory:\nskill: calc(11*13) ; calc(R+2)")
    state = hook.state()
    assert (tmp_path / state["file"]).exists()
    ray.kill(actor)  # asynchronous: wait until the actor is gone before the next episode asks it
    with pytest.raises(ray.exceptions.RayActorError):
        for _ in range(300):
            ray.get(actor.ping.remote(), timeout=10)
            time.sleep(0.1)
    dead = episode(new, None, "g10", context)  # the actor is gone: no context, the episode still runs
    assert dead.success and dead.steps[0].observation.info["xskill"] == "failed"
    fresh = start_memory("xskill-test")
    resumed = XSkillHook(fresh, ProgrammaticSummarizer(), tmp_path)
    resumed.load_state(json.loads(json.dumps(state)))
    # the counters go on from the checkpoint's (7 context requests, 2 groups summarized), not from 0
    assert ray.get(fresh.stats.remote())["xskill/context_requests"] == 7
    assert resumed.summarizer.stats["groups"] == 2
    assert ray.get(fresh.context.remote(new.instruction))["text"] == shown.steps[0].observation.text.split("\n--\n")[0]
