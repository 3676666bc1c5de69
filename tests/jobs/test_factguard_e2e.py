"""FactGuard on Ray: the tool actors (shared by name, a killed actor restarted and its call answered), and one tiny
`raygent run factguard` end to end (SFT, GRPO with the decision-aware reward in a judge actor, the tools as actors
through the agent loop, evaluation before and after)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import raygent, records

pytestmark = pytest.mark.ray


@pytest.fixture
def ray_cluster() -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.ray
def test_the_tools_are_shared_actors_that_come_back_after_a_crash(ray_cluster: None) -> None:
    import ray

    from raygent.environments.factguard import LocalTools, factguard_tasks
    from raygent.environments.factguard.expert import query_of
    from raygent.jobs.factguard.loop import RayTools, tool_backend

    backend = tool_backend("ray", 0)
    assert isinstance(backend, RayTools) and tool_backend("ray", 0) is backend
    assert isinstance(tool_backend("local", 0), LocalTools)
    local = LocalTools(0)
    task = factguard_tasks("train", 0, 1, mix={"kb": 1.0})[0]
    query = query_of(task.params["claim"])
    assert backend.retrieve(query) == local.retrieve(query)
    assert backend.analyze(task.params["frames"], 1, 2) == local.analyze(task.params["frames"], 1, 2)
    other = RayTools(0)  # another worker's handle: the same named actor
    assert other._actor("retriever")._actor_id == backend._actor("retriever")._actor_id
    ray.kill(backend._actor("retriever"), no_restart=False)
    assert backend.retrieve(query) == local.retrieve(query)  # restarted by Ray, the call retried


@pytest.mark.ray
@pytest.mark.slow
def test_raygent_run_factguard_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = raygent(
        "run",
        "factguard",
        "sft.steps=12",
        "sft.batch_tasks=8",
        "trainer.steps=2",
        "trainer.eval_every=0",
        "trainer.eval_tasks=16",
        "trainer.checkpoint_every=2",
        "trainer.tensorboard=false",
        "rollout.num_workers=1",
        "rollout.envs_per_worker=8",
        "rollout.groups_per_step=4",
        "rollout.group_size=4",
        "--out",
        str(out),
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    results = json.loads((out / "factguard.json").read_text())
    assert summary["ablation"] == "decision_aware" and results["ablation"] == "decision_aware"
    for stage in ("before", "after"):
        metrics = results[stage]
        assert 0.0 <= metrics["accuracy"] <= 1.0 and 0.0 <= metrics["macro_f1"] <= 1.0
        assert metrics["cost_error"] >= 0.0 and "tool_calls" in metrics
        assert metrics["accuracy"] == pytest.approx(summary[f"{stage}_success"])  # the checker agrees
    grpo = [r for r in records(out) if r["stage"] == "grpo"]
    assert len(grpo) == 2
    # the decision-aware judge ran in its actor and agrees with the environment's verdict on success
    assert all(r["judge/agreement"] == 1.0 for r in grpo)
    assert (out / "report.html").exists() and (out / "checkpoints" / "final").is_dir()
