"""The RLlib baseline: the discrete web wrapper's slots, encoding, mask and action strings (pure), the wrapper in
Chromium (`check_env`, the code editor's atomic tasks solvable inside its action space), and RLlib PPO training
for two iterations on those tasks through `register_env` (embedded Ray, sampling in this process)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import numpy as np
import pytest
import ray
import torch
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from ray.rllib.core.columns import Columns
from ray.tune.registry import ENV_CREATOR, _global_registry

from raygent.environments.web.discrete import (
    FEATURES,
    KEYS,
    MASK,
    ROLES,
    DiscreteWebEnv,
    Encoding,
    action_text,
    encode,
    make_discrete_env,
    text_slots,
)
from raygent.environments.web.registry import list_tasks
from raygent.environments.web.server import ui_spec
from raygent.jobs.web_agent.rllib import (
    ENV_NAME,
    EPISODE_RETURN_MEAN,
    metric,
    module_spec,
    ppo_config,
    success_rate,
    template_counts,
)

pytestmark = [pytest.mark.browser, pytest.mark.ray]

APP = "code_editor"
SMALL = Encoding(elements=8, text_slots=2, name_buckets=4, term_buckets=8)
SMALL_TYPES = ("click", "left_double", "right_single", "type slot 0", "type slot 1")
OBSERVATION = """banner
  navigation "Menu bar"
    [1] button "File"
    [2] button "View"
navigation "Explorer"
  list
    listitem
      [3] button "README.md"
    listitem
      [4] button "notes.txt" selected
dialog "New file"
  [5] textbox "File name" value="notes.txt"
  [6] button "Create"
menu "View"
  [7] menuitem "Word Wrap"
"""

# Columns of one element row (see `Encoding.per_element`).
NAME_IN_GOAL = 1 + len(ROLES) + 1 + SMALL.name_buckets
EQUALS_SLOT = NAME_IN_GOAL + 2
IN_MENU = SMALL.per_element - 2


def rows(features: np.ndarray, encoding: Encoding = SMALL) -> np.ndarray:
    return features[: encoding.elements * encoding.per_element].reshape(encoding.elements, encoding.per_element)


# ---------------------------------------------------------------- pure functions


@pytest.mark.parametrize(
    ("goal", "slots"),
    [
        ("Open the file README.md in the editor.", ["README.md"]),
        ("Create a new, empty file named lib/tools.mini.", ["lib/tools.mini"]),
        ('Replace every "front" in the document with "voyage".', ["front", "voyage"]),
        ("Rename the layer “Logo” to “Stripe”.", ["Logo", "Stripe"]),
        ("Set the playback speed to 1.75×.", ["1.75"]),
        ("Change the canvas size to 132×120 pixels.", ["132", "120"]),
        ("Turn word wrap on in the editor.", []),
        ('Save "a", "b", "c", "d", "e" and 7.', ["a", "b", "c", "d"]),
    ],
)
def test_text_slots_come_from_the_instruction(goal: str, slots: list[str]) -> None:
    assert text_slots(goal, 4) == slots


def test_encoding_marks_the_element_named_in_the_instruction() -> None:
    features, mask, elements, slots = encode(OBSERVATION, "Open the file README.md in the editor.", "", 0.5, SMALL)
    assert features.shape == (SMALL.size,) and mask.shape == (SMALL.actions,)
    assert slots == ["README.md"]
    table = rows(features)
    names = [p.element.name for p in elements]
    readme = names.index("README.md")
    assert table[readme, EQUALS_SLOT] == 1.0 and table[readme, NAME_IN_GOAL] == 1.0
    for other in ("notes.txt", "Create", "Word Wrap"):
        assert table[names.index(other), EQUALS_SLOT] == 0.0 and table[names.index(other), NAME_IN_GOAL] == 0.0
    assert table[names.index("File"), NAME_IN_GOAL] == 1.0  # "file" is a word of the goal, but not the slot
    assert table[names.index("File"), EQUALS_SLOT] == 0.0
    assert table[names.index("Word Wrap"), IN_MENU] == 1.0 and table[names.index("File"), IN_MENU] == 0.0
    assert table[names.index("File name"), IN_MENU + 1] == 1.0  # in the dialog
    assert not table[len(elements) :].any()  # empty element slots stay zero
    other_goal, _, _, _ = encode(OBSERVATION, "Turn word wrap on in the editor.", "", 0.5, SMALL)
    assert rows(other_goal)[names.index("Word Wrap"), NAME_IN_GOAL] == 1.0
    assert rows(other_goal)[readme, NAME_IN_GOAL] == 0.0
    assert not np.array_equal(features[-SMALL.globals :], other_goal[-SMALL.globals :])


def test_mask_and_action_strings() -> None:
    _, mask, elements, slots = encode(OBSERVATION, "Create a new, empty file named draft.txt.", "", 0.0, SMALL)
    k = SMALL.elements
    texts = {i: action_text(i, elements, slots, SMALL) for i in range(SMALL.actions)}
    assert texts[0] == "click(1)" and texts[k + 2] == "left_double(3)" and texts[2 * k + 6] == "right_single(7)"
    assert [texts[SMALL.actions - 2], texts[SMALL.actions - 1]] == list(KEYS)
    type_into_field = 3 * k + 4  # slot 0 into element slot 4, the "File name" textbox
    assert texts[type_into_field] == 'type(5, "draft.txt")'
    allowed = {texts[i] for i in np.flatnonzero(mask)}
    assert allowed == {f"{verb}({n})" for verb in ("click", "left_double", "right_single") for n in range(1, 8)} | {
        'type(5, "draft.txt")',
        *KEYS,
    }
    assert texts[7] == "click(0)"  # an empty element slot targets the id no page has
    assert texts[3 * k + k + 4] == 'type(0, "")'  # an empty text slot
    with pytest.raises(ValueError, match="outside"):
        action_text(SMALL.actions, elements, slots, SMALL)


def test_an_encoding_may_use_fewer_verbs() -> None:
    clicks = Encoding(elements=8, text_slots=2, name_buckets=4, term_buckets=8, verbs=("click",))
    _, mask, elements, slots = encode(OBSERVATION, "Create a file named draft.txt.", "", 0.0, clicks)
    assert clicks.actions == 8 * (1 + 2) + len(KEYS) and mask.shape == (clicks.actions,)
    texts = [action_text(i, elements, slots, clicks) for i in range(clicks.actions)]
    assert texts[:3] == ["click(1)", "click(2)", "click(3)"] and texts[8 + 4] == 'type(5, "draft.txt")'
    assert Encoding.from_config({"verbs": ["right_single", "click"]}).verbs == ("click", "right_single")
    with pytest.raises(ValueError, match="verbs"):
        Encoding(verbs=("hover",))


# ---------------------------------------------------------------- in Chromium


@pytest.fixture(scope="module")
def env() -> Iterator[DiscreteWebEnv]:
    environment = make_discrete_env({"app": APP, "ui_seed": 0, "max_steps": 8})
    yield environment
    environment.close()


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_wrapper_passes_check_env(env: DiscreteWebEnv) -> None:
    check_env(env, skip_render_check=True)
    observation, _ = env.reset(seed=3)
    assert env.observation_space.contains(observation)
    assert observation[FEATURES].shape == (env.encoding.size,) and observation[FEATURES].any()
    assert observation[MASK][env.action_space.n - len(KEYS) :].all()


@pytest.mark.parametrize("template", [t.split("/")[1] for t in list_tasks(APP, [1])])
def test_atomic_tasks_are_solvable_inside_the_action_space(env: DiscreteWebEnv, template: str) -> None:
    """The scripted expert's every action is one allowed discrete action (`select` is `type` on a list)."""
    observation, _ = env.reset(options={"task": f"{APP}/{template}/17"})
    task = env.browser_env.task
    assert task is not None
    solver = task.task.solve(task.params, ui_spec(task.app, task.ui_seed))
    wanted = next(solver)
    for _ in range(task.max_steps):
        wanted = re.sub(r"^select\(", "type(", wanted)
        allowed = [i for i in np.flatnonzero(observation[MASK]) if env.action_text(int(i)) == wanted]
        assert allowed, f"{wanted} is not an allowed action (slots {text_slots(task.goal, 4)})"
        observation, reward, terminated, truncated, info = env.step(allowed[0])
        if terminated or truncated:
            break
        wanted = solver.send(env.last_text)
    assert info.get("success") and reward == 1.0, info.get("message")


# ---------------------------------------------------------------- RLlib


@pytest.mark.parametrize("policy", ["elements", "flat"])
def test_policies_mask_logits_and_keep_the_action_layout(policy: str) -> None:
    """Forbidden actions get the float minimum; in the slot scorer, slot k's features move only the logits of
    slot k (one per action type) and the keys (through the pooled embedding)."""
    spec = module_spec(policy, SMALL, (16,))
    spec.observation_space = spaces.Dict(
        {FEATURES: spaces.Box(0, 1, (SMALL.size,), np.float32), MASK: spaces.Box(0, 1, (SMALL.actions,), np.float32)}
    )
    spec.action_space = spaces.Discrete(SMALL.actions)
    module = spec.build()
    generator = torch.Generator().manual_seed(0)
    features = torch.rand(2, SMALL.size, generator=generator)
    mask = torch.ones(2, SMALL.actions)
    mask[0, :5] = 0.0

    def logits(values: torch.Tensor) -> torch.Tensor:
        output = module.forward_exploration({Columns.OBS: {FEATURES: values, MASK: mask}})
        return output[Columns.ACTION_DIST_INPUTS]

    base = logits(features)
    assert base.shape == (2, SMALL.actions)
    assert (base[0, :5] < -1e30).all() and (base[1, :5] > -1e30).all()
    values = module.compute_values({Columns.OBS: {FEATURES: features, MASK: mask}})
    assert values.shape == (2,)
    if policy == "elements":
        slot = 5
        moved = features.clone()
        moved[:, slot * SMALL.per_element + 3] += 1.0
        changed = set(torch.nonzero((logits(moved) - base).abs().sum(0) > 0).flatten().tolist())
        types = len(SMALL_TYPES)
        keys = set(range(SMALL.actions - len(KEYS), SMALL.actions))
        assert changed == {t * SMALL.elements + slot for t in range(types)} | keys


def test_success_rate_reads_this_iterations_sums() -> None:
    nan = float("nan")
    result = {
        "env_runners": {
            "web_episodes": 4,
            "web_episodes_solved": 1,
            "web_template_episodes": {"open_file": 3, "run_file": 1, "word_wrap": nan},
            "web_template_solved": {"open_file": 1, "run_file": 0, "word_wrap": nan},
        }
    }
    assert success_rate(result) == 0.25
    assert template_counts(result) == {"open_file": (3, 1), "run_file": (1, 0)}  # NaN: none this iteration
    assert success_rate({"env_runners": {"web_episodes": nan}}) is None
    assert metric(result, "env_runners/web_episodes") == 4 and metric(result, "env_runners/missing") is None


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-single-agent-env-v0")
@pytest.mark.parametrize("policy", ["elements", "flat"])
def test_ppo_trains_on_atomic_tasks(ray_cluster: None, policy: str) -> None:
    config = ppo_config(
        APP,
        num_env_runners=0,
        train_batch_size=16,
        minibatch_size=8,
        num_epochs=2,
        max_steps=4,
        hidden=(16,),
        policy=policy,
    )
    assert config.env == ENV_NAME and config.env_config["difficulties"] == [1]
    assert _global_registry.contains(ENV_CREATOR, ENV_NAME)
    with pytest.raises(ValueError, match="policy"):
        ppo_config(APP, policy="transformer")
    algo = config.build_algo()
    try:
        module = algo.get_module()
        before = [p.detach().clone() for p in module.parameters()]
        results = [algo.train() for _ in range(2)]
        after = list(module.parameters())
    finally:
        algo.stop()
    for result in results:
        episode_return = metric(result, EPISODE_RETURN_MEAN)
        assert episode_return is not None and 0.0 <= episode_return <= 1.0
        rate = success_rate(result)
        assert rate is not None and 0.0 <= rate <= 1.0
        assert metric(result, "env_runners/web_episodes_infra_failed") == 0
        loss = metric(result, "learners/default_policy/total_loss")
        assert loss is not None and math.isfinite(float(loss))
        counts = template_counts(result)
        assert set(counts) <= {t.split("/")[1] for t in list_tasks(APP, [1])}
        assert sum(n for n, _ in counts.values()) == metric(result, "env_runners/web_episodes") > 0
    assert metric(results[-1], "env_runners/num_env_steps_sampled_lifetime") >= 32
    assert any(not torch.equal(b, a.detach()) for b, a in zip(before, after, strict=True))
