"""The text environments of the registry (no browser): every observation a task's episode shows lies in the
environment's own observation space, and those that reset without a task pass gymnasium's `check_env`.

The rollout worker keeps the wrappers `gymnasium.make` adds, the passive checker among them, so an observation
outside its space is a warning on every run; FactGuard's, ReasonAug's and single_turn's `Text` spaces had
gymnasium's default charset (letters and digits), which no sentence fits (`environments/text.py`)."""

from __future__ import annotations

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from raygent.platform.config import load_entry
from raygent.platform.envs import registered_envs

TEXT_ENVS = ["toolcalc", "factguard", "reasonaug", "single_turn"]


def _made(name: str) -> tuple[gymnasium.Env, list]:
    spec = registered_envs()[name]
    load_entry(spec.registration)()
    tasks = load_entry(spec.tasks)(spec.splits[0], 0, 3, **spec.task_kwargs)
    return gymnasium.make(spec.id, **spec.kwargs), tasks


@pytest.mark.parametrize("name", TEXT_ENVS)
def test_every_observation_of_an_episode_is_in_the_observation_space(name: str) -> None:
    env, tasks = _made(name)
    space = env.observation_space
    try:
        for task in tasks:
            observation, _ = env.reset(options={"task": task})
            assert space.contains(observation), (name, observation)
            for action in ("answer(7)", "not an action", "verdict(real, 0.9)"):
                observation, _, terminated, truncated, _ = env.step(action)
                assert space.contains(observation), (name, action, observation)
                if terminated or truncated:
                    break
    finally:
        env.close()


@pytest.mark.parametrize("name", ["toolcalc", "factguard", "reasonaug"])
def test_check_env_passes(name: str) -> None:
    env, _ = _made(name)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()
