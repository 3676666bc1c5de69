"""ReasonAug on Ray: the MAGR reward actor comes back after a crash with its closed loop intact, and one tiny
`raygent run reasonaug` end to end (SFT, GRPO with MAGR in its actor and the selective entropy term, the ReID model
retrained in the loop, the report)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import raygent, records

pytestmark = pytest.mark.ray

SMALL = {"train_ids": 10, "views_per_id": 3, "test_ids": 6, "queries_per_id": 1, "gallery_per_id": 3}


@pytest.fixture
def ray_cluster() -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_a_killed_reward_actor_is_restarted_and_keeps_its_loop(ray_cluster: None, tmp_path: Path) -> None:
    import ray
    from test_reasonaug import _trajectory

    from raygent.environments.reasonaug import heuristic_instruction, reasonaug_tasks
    from raygent.environments.reasonaug.data import build_arrays, write_arrays
    from raygent.environments.reasonaug.world import WorldSizes
    from raygent.jobs.reasonaug.recipe import prepare_reid
    from raygent.platform.config import load_config
    from raygent.platform.plugins import Component
    from raygent.platform.rl.reward import RewardActor
    from raygent.rewards.reasonaug.magr import read_jsonl
    from raygent.rewards.reasonaug.reid import ReIDSettings

    arrays = build_arrays(0, WorldSizes(**SMALL), judge_per_id=2)
    write_arrays(tmp_path / "data.npz", arrays)
    reid = ReIDSettings(width=4, embed=8, pretrain_steps=3, judge_steps=3, round_steps=2, threads=1)
    prepare_reid(tmp_path / "reid", arrays, reid, 0, "e2e", cache=False)
    config = load_config("reasonaug", [])
    assert config.reward.resources["max_restarts"] >= 1  # the shipped config restarts the actor
    actor = ray.remote(RewardActor).options(**config.reward.resources)
    kwargs = {
        "data": str(tmp_path / "data.npz"),
        "state_dir": str(tmp_path / "reid"),
        "reid": reid.model_dump(),
        "retrain_every": 1,
        "tau": -1.0,
    }
    handle = actor.remote(Component(entry="raygent.rewards.reasonaug.magr:MAGR", kwargs=kwargs))
    tasks = reasonaug_tasks("train", 0, 2, **SMALL)
    rng = np.random.default_rng(0)
    batch = [_trajectory(t, heuristic_instruction(t, rng), i) for i, t in enumerate(tasks)]
    assert [j.success for j in ray.get(handle.judge.remote(batch))] == [True, True]
    ray.kill(handle, no_restart=False)
    again = ray.get(handle.judge.remote(batch))  # Ray restarts the actor and retries the call
    assert [j.success for j in again] == [True, True]
    rounds = read_jsonl(tmp_path / "reid" / "reid.jsonl")
    assert [r["round"] for r in rounds] == [1, 2] and rounds[-1]["pool"] == 4  # the pool survived the crash


@pytest.mark.slow
def test_raygent_run_reasonaug_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = raygent(
        "run", "reasonaug",
        *(f"env.task_kwargs.{k}={v}" for k, v in SMALL.items()),
        "sft.steps=4", "sft.batch_tasks=8", "trainer.steps=2", "trainer.eval_tasks=8", "trainer.checkpoint_every=2",
        "trainer.tensorboard=false", "rollout.num_workers=1", "rollout.envs_per_worker=8",
        "rollout.groups_per_step=2", "rollout.group_size=4", "reward.kwargs.retrain_every=1",
        "reward.kwargs.reid={width: 4, embed: 8, pretrain_steps: 5, judge_steps: 5, round_steps: 3, threads: 1}",
        "reasonaug.cache=false",
        "--out", str(out),
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((out / "reasonaug.json").read_text())
    assert results["variant"] == "closed" and results["rounds"] == 2
    assert 0.0 <= results["map_before"] <= 1.0 and 0.0 <= results["map_after"] <= 1.0
    assert [c["round"] for c in results["curve"]] == [0, 1, 2]
    grpo = [r for r in records(out) if r["stage"] == "grpo"]
    assert len(grpo) == 2
    # a step whose groups all had zero variance is skipped (no loss terms ran); the others log the entropy term
    assert all("learner/selective_entropy/entropy_identity" in r or r.get("learner/skipped") == 1.0 for r in grpo)
    calls = [json.loads(line) for line in (out / "reid" / "magr.jsonl").read_text().splitlines()]
    assert [c["call"] for c in calls] == [1, 2] and all(c["episodes"] == 8 for c in calls)
    assert (out / "report.html").exists() and (out / "checkpoints" / "final").is_dir()
