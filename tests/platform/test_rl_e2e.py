"""`raygent run grpo_toy_tiny` end to end on the embedded cluster: killed mid-run and resumed without repeating or
skipping a task batch; then `raygent serve` on the run answers /v1/act and /v1/chat/completions, with 422 and
413 for bad requests, and `raygent eval` on the run reproduces its held-out success."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raygent.jobs.grpo_toy.tasks import toolcalc_tasks
from raygent.platform.rl.tasks import StaticSource

from conftest import post, raygent, records, run_killed_at_grpo_step, served

pytestmark = [pytest.mark.slow, pytest.mark.ray]

STEPS = 6
SMALL = [
    "sft.steps=4",
    "sft.batch_tasks=4",
    f"trainer.steps={STEPS}",
    "trainer.checkpoint_every=2",
    "trainer.eval_every=0",
    "trainer.eval_tasks=8",
    "rollout.groups_per_step=2",
    "rollout.group_size=2",
    "rollout.envs_per_worker=2",
    "rollout.max_turns=2",
    "rollout.sampling.max_new_tokens=8",
    "rollout.eval_sampling.max_new_tokens=8",
    "policy.vocab_size=320",
    "rollout.engine_num_cpus=0",
    "learner.num_cpus=0",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A grpo_toy_tiny run killed after GRPO step 3 (checkpoint at step 2) and resumed to the end."""
    directory = tmp_path_factory.mktemp("grpo") / "run"
    run_killed_at_grpo_step("grpo_toy_tiny", SMALL, directory, 3)
    assert (directory / "checkpoints" / "LATEST").read_text().strip() == "grpo_000002"
    done = raygent("run", "--resume", str(directory), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resumed from grpo_000002" in done.stdout
    return directory


def test_resumed_run_trains_every_task_batch_exactly_once(run_dir: Path) -> None:
    grpo = [r for r in records(run_dir) if r["stage"] == "grpo"]
    assert [r["step"] for r in grpo] == list(range(1, STEPS + 1))
    assert [r["data/batch_index"] for r in grpo] == list(range(STEPS))
    source = StaticSource(
        toolcalc_tasks,
        split="train",
        seed=0,
        batch_size=2,
        task_kwargs={"difficulty": 1, "task_types": ["compare", "single"]},
    )
    assert [r["data/task_ids"] for r in grpo] == [[t.id for t in source.next(i)] for i in range(STEPS)]
    assert [r["policy/version"] for r in grpo] == list(range(1, STEPS + 1))
    sft = [r for r in records(run_dir) if r["stage"] == "sft"]
    assert [r["step"] for r in sft] == [1, 2, 3, 4]
    for key in ("timing/generate", "timing/learn", "timing/sync", "rollout/tokens_per_s", "rollout/reward"):
        assert all(key in r for r in grpo), key
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["job"] == "grpo_toy_tiny" and summary["steps"] == STEPS
    assert 0.0 <= summary["before_success"] <= 1.0 and 0.0 <= summary["after_success"] <= 1.0
    assert (run_dir / "curve.png").stat().st_size > 1000 and (run_dir / "report.html").is_file()
    assert any((run_dir / "tensorboard").iterdir())
    final = run_dir / "checkpoints" / "final"
    assert json.loads((final / "trainer_state.json").read_text())["version"] == STEPS


def test_serve_answers_both_routes_and_rejects_bad_requests(run_dir: Path) -> None:
    with served(run_dir, wait_s=240) as base:
        task = toolcalc_tasks("heldout", 1, 1, difficulty=1)[0]
        act = {"task": {"instruction": task.instruction}, "observation": {"text": task.instruction}}
        status, answer = post(f"{base}/v1/act", json.dumps(act).encode())
        assert status == 200 and isinstance(answer["action"], str) and answer["policy_version"] == STEPS
        assert answer["valid"] is None and answer["attempts"] == 1  # ToolCalc declares no action grammar
        chat = {"model": "raygent", "messages": [{"role": "user", "content": task.instruction}], "max_tokens": 8}
        status, completion = post(f"{base}/v1/chat/completions", json.dumps(chat).encode())
        assert status == 200 and completion["object"] == "chat.completion"
        assert completion["choices"][0]["message"]["role"] == "assistant"
        assert 1 <= completion["usage"]["completion_tokens"] <= 8
        status, _ = post(f"{base}/v1/act", json.dumps({"task": {"instruction": ""}}).encode())
        assert status == 422
        status, _ = post(f"{base}/v1/chat/completions", b"{not json")
        assert status == 422
        status, _ = post(f"{base}/v1/act", json.dumps({**act, "pad": "x" * 2_000_000}).encode())
        assert status == 413
        status, answer = post(f"{base}/v1/act", json.dumps(act).encode())
        assert status == 200, "the replica survived the bad requests"


def test_raygent_eval_reproduces_the_runs_held_out_success(run_dir: Path, tmp_path: Path) -> None:
    """`raygent eval toolcalc --policy RUN_DIR`: the run's trained policy on the run's held-out draw, without
    training: the same tasks and, greedy, the same outcomes as the run's last evaluation."""
    done = raygent("eval", "toolcalc", "--policy", str(run_dir), "--out", str(tmp_path / "eval"), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text())
    last = [r for r in records(run_dir) if r["stage"] == "eval"][-1]
    episodes = [json.loads(line) for line in (tmp_path / "eval" / "trajectories.jsonl").read_text().splitlines()]
    assert {e["task_id"]: e["success"] for e in episodes} == last["eval/outcomes"]
    assert summary["episodes"] == 8 and summary["success"] == json.loads((run_dir / "summary.json").read_text())[
        "after_success"
    ]
    low, high = summary["ci95"]
    assert low <= summary["success"] <= high and set(summary["templates"]) <= {"larger", "smaller", "a+b", "a-b", "a*b"}
    assert "95 % interval" in done.stdout
    wrong = raygent("eval", "toolcalk", "--policy", str(run_dir), timeout=120)
    assert wrong.returncode == 2 and "did you mean 'toolcalc'" in wrong.stderr, wrong.stderr
    other = raygent("eval", "factguard", "--policy", str(run_dir), timeout=120)
    assert other.returncode == 2 and "trained on raygent/ToolCalc-v0" in other.stderr, other.stderr


@pytest.mark.ray
def test_two_learner_workers_train_and_resume_after_a_kill(tmp_path: Path) -> None:
    """`learner.num_workers=2` (one gloo DDP group of two learner actors): killed after GRPO step 3, the run resumes
    from its step-2 checkpoint (both ranks restore) and trains each task batch exactly once."""
    import yaml

    from raygent.policies.loading import load_policy

    directory = tmp_path / "run"
    run_killed_at_grpo_step("grpo_toy_tiny", [*SMALL, "learner.num_workers=2"], directory, 3)
    assert (directory / "checkpoints" / "LATEST").read_text().strip() == "grpo_000002"
    done = raygent("run", "--resume", str(directory), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resumed from grpo_000002" in done.stdout
    assert yaml.safe_load((directory / "config.yaml").read_text())["learner"]["num_workers"] == 2
    grpo = [r for r in records(directory) if r["stage"] == "grpo"]
    assert [r["step"] for r in grpo] == list(range(1, STEPS + 1))
    assert [r["data/batch_index"] for r in grpo] == list(range(STEPS))
    assert [r["policy/version"] for r in grpo] == list(range(1, STEPS + 1))
    final = directory / "checkpoints" / "final"
    assert json.loads((final / "trainer_state.json").read_text())["version"] == STEPS
    load_policy(final)  # rank 0 wrote a loadable model directory
