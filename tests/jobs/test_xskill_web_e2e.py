"""One tiny `raygent run xskill_web` end to end, in its transfer form: SFT with the teacher's skill contexts,
phase I (frozen weights) on one app's train tasks with the memory actor shared by the rollout workers, phase II on
another app's held-out tasks in the four memory variants, the memory's snapshot with the checkpoint, the report's
screens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import raygent, records

pytestmark = [pytest.mark.ray, pytest.mark.browser, pytest.mark.slow]


def test_memory_accumulated_on_one_app_is_read_on_another(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = raygent(
        "run", "xskill_web", "env.task_kwargs.apps=[code_editor]", "env.task_kwargs.eval_apps=[media_player]",
        "sft.steps=4", "trainer.steps=1", "trainer.eval_tasks=4", "rollout.groups_per_step=2", "rollout.group_size=2",
        "trainer.checkpoint_every=1", "trainer.tensorboard=false", "--out", str(out),
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((out / "xskill.json").read_text())
    (phase_one,) = [r for r in records(out) if r["stage"] == "grpo"]
    assert all(task_id.startswith("code_editor/") for task_id in phase_one["data/task_ids"])
    assert phase_one["learner/skipped"] == 1.0 and "learner/grad_norm" not in phase_one, "the weights stayed frozen"
    # the rollout metrics describe the batch the hook withheld from the learner (2 groups of 2, less infra failures)
    assert phase_one["rollout/samples"] + phase_one["rollout/infra_failures"] == 4
    for stage in ("before", "after"):
        variants = results[stage]
        assert set(variants) == {"none", "experiences", "skills", "both"}
        for name, record in variants.items():
            assert record["episodes"] == 4 and set(record["templates"]) <= set(results["novel_templates"])
            assert record["xskill/context_failed"] == record["xskill/context_timeout"] == 0
            asked = record["xskill/context_ok"] + record["xskill/context_empty"]
            assert (record["xskill/context_off"], asked) == ((4, 0) if name == "none" else (0, 4))
    # every held-out template is the media player's, an app in no SFT demonstration: all novel
    assert results["novel_templates"] and all(
        t in results["novel_templates"] for t in results["after"]["both"]["templates"]
    )
    state = json.loads((out / "checkpoints" / "grpo_000001" / "trainer_state.json").read_text())
    snapshot = state["hooks"]["0:XSkillHook"]["file"]
    assert snapshot == "xskill/memory_1.json" and (out / snapshot).is_file()
    assert (out / "xskill" / "SKILL.md").is_file() and (out / "report.html").is_file()
