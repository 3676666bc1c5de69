"""ReasonAug's world: the instruction grammar, the frozen generator (identity edits really change the person),
the long-tail train prior against the uniform test one, and the one-step augmentation environment."""

from __future__ import annotations

import numpy as np
import pytest

from raygent.environments.reasonaug import (
    AugmentationEnv,
    InstructionError,
    WorldSizes,
    build_world,
    format_instruction,
    heuristic_instruction,
    parse_instruction,
    random_instruction,
    reasonaug_demonstrations,
    reasonaug_tasks,
    render,
)
from raygent.environments.reasonaug.tasks import observation_text
from raygent.environments.reasonaug.world import apply_instruction, identity_changed
from raygent.rewards.reasonaug.reid import decode_image

SLOTS = {"bg": "street", "light": "low", "top": "red", "bottom": "blue", "item": "bag", "occ": "left", "shift": "none"}


def test_the_grammar_round_trips_and_names_what_is_wrong() -> None:
    text = format_instruction(SLOTS)
    assert text == "bg street; light low; top red; bottom blue; item bag; occ left; shift none"
    assert parse_instruction(text) == SLOTS
    assert parse_instruction("shift none; occ left; item bag; bottom blue; top red; light low; bg street") == SLOTS
    for bad, message in (
        ("bg street; light low", "missing slot"),
        (text.replace("top red", "top pink"), "'pink' is not one of"),
        (text + "; bg park", "given twice"),
        (text.replace("occ left", "hat left"), "unknown slot"),
        ("bg", "expected 'key value'"),
    ):
        with pytest.raises(InstructionError, match=message):
            parse_instruction(bad)


def test_the_generator_is_deterministic_and_edits_what_it_is_told() -> None:
    identity = {"top": "red", "bottom": "blue", "item": "none", "hair": "black", "shoes": "white", "build": "slim"}
    view = {"bg": "plain", "light": "mid", "occ": "none", "shift": "none"}
    image = render(identity, view, 5)
    assert image.shape == (3, 32, 16) and image.dtype == np.float32 and 0 <= image.min() and image.max() <= 1
    assert np.array_equal(image, render(identity, view, 5))
    torso = (slice(None), slice(9, 17), slice(6, 10))
    assert image[0][torso[1:]].mean() > 0.7 and image[2][torso[1:]].mean() < 0.3  # a red top
    recoloured, same_view = apply_instruction(
        identity, view, {**SLOTS, "top": "green", "bg": "plain", "light": "mid", "occ": "none"}
    )
    green = render(recoloured, same_view, 5)
    assert green[1][torso[1:]].mean() > 0.5 and green[0][torso[1:]].mean() < 0.3  # the identity changed
    assert identity_changed(identity, {**SLOTS, "top": "green"}) and not identity_changed(
        identity, {**SLOTS, "top": "red", "bottom": "blue", "item": "none"}
    )
    occluded = render(identity, {**view, "occ": "left"}, 5)
    assert np.abs(occluded[:, 12:, :8] - image[:, 12:, :8]).mean() > 0.2  # the left half is covered
    assert np.abs(occluded[:, :8, :] - image[:, :8, :]).mean() < 0.01  # the head is not
    dark = render(identity, {**view, "light": "low"}, 5)
    assert dark.mean() < 0.6 * image.mean()


def test_train_views_are_long_tailed_and_test_identities_are_disjoint() -> None:
    world = build_world(3, WorldSizes(train_ids=40, views_per_id=5, test_ids=40))
    train_ids = {tuple(sorted(i.items())) for i in world.train_identities}
    test_ids = {tuple(sorted(s.identity.items())) for s in world.query + world.gallery}
    assert len(train_ids) == 40 and len(test_ids) == 40 and not train_ids & test_ids
    plain = np.mean([s.view["bg"] == "plain" for s in world.train])
    occluded_train = np.mean([s.view["occ"] != "none" for s in world.train])
    occluded_test = np.mean([s.view["occ"] != "none" for s in world.gallery])
    assert plain > 0.55 and occluded_train < 0.25 and occluded_test > 0.55
    assert build_world(3, WorldSizes(train_ids=40, views_per_id=5, test_ids=40)) == world


def test_the_environment_renders_the_instruction_and_reports_it() -> None:
    task = reasonaug_tasks("train", 0, 1)[0]
    env = AugmentationEnv()
    observation, _ = env.reset(options={"task": task})
    assert (
        observation["text"] == observation_text(task) and "top " + task.params["identity"]["top"] in observation["text"]
    )
    keep = {**SLOTS, **{k: task.params["identity"][k] for k in ("top", "bottom", "item")}}
    _, reward, terminated, _, info = env.step(format_instruction(keep))
    assert reward == 1.0 and terminated and info["valid_action"] and not info["identity_changed"]
    anchor, edited = decode_image(info["anchor"]), decode_image(info["edited"])
    assert anchor.shape == edited.shape == (3, 32, 16) and not np.array_equal(anchor, edited)
    env.reset(options={"task": task})
    _, reward, _, _, info = env.step("bg street; please")
    assert reward == 0.0 and not info["valid_action"] and "edited" not in info
    with pytest.raises(RuntimeError):
        env.step("again")
    randomised = AugmentationEnv(instruction="random")
    randomised.reset(options={"task": task})
    _, reward, _, _, info = randomised.step("not an instruction")  # the random baseline ignores the text
    assert reward == 1.0 and not info["identity_changed"]


def test_the_heuristic_writer_copies_the_identity_unless_it_recolours() -> None:
    tasks = reasonaug_tasks("train", 1, 200, recolour=0.0)
    rng = np.random.default_rng(0)
    for task in tasks:
        slots = parse_instruction(heuristic_instruction(task, rng))
        assert not identity_changed(task.params["identity"], slots)
        assert not identity_changed(task.params["identity"], parse_instruction(random_instruction(task, rng)))
    recoloured = reasonaug_tasks("train", 1, 400, recolour=0.3)
    changed = np.mean(
        [identity_changed(t.params["identity"], parse_instruction(heuristic_instruction(t, rng))) for t in recoloured]
    )
    assert 0.55 < changed < 0.8  # 1 - 0.7^3 = 0.657
    demos = reasonaug_demonstrations(tasks[:3])
    assert demos == reasonaug_demonstrations(tasks[:3]) and all(len(d) == 1 for d in demos)
    assert demos[0][0][0] == observation_text(tasks[0])
    assert {t.params["split"] for t in reasonaug_tasks("heldout", 0, 5)} == {"heldout"}
