"""One tiny `raygent run seagent seagent.generalist=[two apps]` end to end. Each specialist is a whole
self-evolution run (exploration and guidebook, curriculum tasks on an unknown page, the World State Model in its
reward actor (a tiny judge, to keep it short), GRPO + adversarial imitation, evaluation with the app's checker
before and after, the report's SEAgent page); then the generalist, distilled from their judged successes and
trained on both apps at once. One test covers both, as one run takes about two minutes of the serial pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import raygent, records

pytestmark = [pytest.mark.ray, pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def tiny_judge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from raygent.policies.presets import build_tiny_model
    from raygent.policies.tokenizer import build_tokenizer

    directory = tmp_path_factory.mktemp("judge")
    corpus = ["+ menu Audio ~ button Mute -> Unmute", " yes", " no", "Task: Answer: yes no"] * 50
    return build_tiny_model("tiny-qwen2", build_tokenizer(corpus, directory, vocab_size=300), directory)


def test_specialists_then_a_generalist_on_their_apps(tmp_path: Path, tiny_judge: Path) -> None:
    """`seagent.generalist`: a specialist per app (each a whole self-evolution run), then a generalist distilled
    from their judged successes and trained on both apps' curricula at once, measured on each app's tasks."""
    out = tmp_path / "run"
    apps = ["media_player", "code_editor"]
    done = raygent(
        "run", "seagent", f"seagent.generalist=[{','.join(apps)}]",
        "trainer.steps=1", "trainer.eval_tasks=2", "sft.steps=2", "rollout.groups_per_step=2",
        "rollout.group_size=2", "rollout.max_turns=2", "tasks.kwargs.explore_episodes=6",
        "seagent.generalist_steps=2", "seagent.distill_steps=2", "seagent.distill_batch=2",
        f"seagent.wsm_model={tiny_judge}", "seagent.wsm_eval_seeds=0", "seagent.examples=0",
        "trainer.tensorboard=false", "--out", str(out),
        timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    details = json.loads((out / "generalist.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert list(details["apps"]) == apps and summary["apps"] == apps
    first = out / "specialists" / apps[0]  # a whole self-evolution run
    own = json.loads((first / "seagent.json").read_text())
    assert own["url"].startswith("http://127.0.0.1:") and own["curriculum"]["explored"]
    assert len(own["curriculum"]["guidebook"]) >= 3
    assert [r for r in records(first) if r["stage"] == "judge"], "the WSM judged the training batch"
    grpo = [r for r in records(first) if r["stage"] == "grpo"]
    assert len(grpo) == 1 and "judge/success" in grpo[0]
    # the KL's reference is the policy as RL began (after SFT), not the randomly initialized model
    assert (first / "checkpoints" / "reference").is_dir() and grpo[0]["learner/kl/kl_ref"] < 1e-3
    assert own["judged"] and all(example["captions"] for example in own["judged"])
    assert all(task_id.startswith("url_") for task_id in grpo[0]["data/task_ids"])  # the curriculum's tasks
    assert (first / "seagent.html").is_file() and (first / "report.html").is_file()
    successes = 0
    for app in apps:
        specialist = out / "specialists" / app
        own = json.loads((specialist / "summary.json").read_text())
        assert own["app"] == app and own["after_success"] == details["apps"][app]["specialist_after"]
        kept = json.loads((specialist / "successes.json").read_text())["kept"]
        successes += sum(len(v) for v in kept.values())
        assert details["apps"][app]["generalist_after"] is not None
    generalist = out / "generalist"
    grpo = [r for r in records(generalist) if r["stage"] == "grpo"]
    assert len(grpo) == 2
    pages = {task_id.split("/")[0] for r in grpo for task_id in r["data/task_ids"]}
    assert len(pages) == 2  # both apps' curricula in every batch
    evals = [r for r in records(generalist) if r["stage"] == "eval"]
    assert {f"eval/{app}/success" for app in apps} <= set(evals[-1])
    hooks = [r for r in records(generalist) if r["stage"] == "hooks"]
    assert (hooks[0]["distill/demonstrations"] if hooks else 0.0) == successes
    assert summary["specialists_success"] == summary["before_success"]
    assert summary["holds"] == (summary["generalist_success"] >= summary["specialists_success"])
    assert summary["steps"] == details["steps"] == 2  # the generalist's own training, read from its directory
