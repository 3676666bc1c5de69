"""SEAgent in Chromium: the environment on an unknown page, the curriculum's exploration, the judge's data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from raygent.environments.web.registry import make_task
from raygent.environments.web.server import AppServer
from raygent.environments.web.url_env import UrlUnavailable, url_task
from raygent.jobs.seagent.curriculum import Curriculum
from raygent.jobs.seagent.env import SeagentEnv
from raygent.jobs.seagent.wsm_data import record_tasks
from raygent.jobs.seagent.wsm_train import checker_says

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page() -> Iterator[str]:
    """The media player served by a second loopback server: to the environment, a page it knows nothing about."""
    server = AppServer(docs=False).start()
    yield server.app_url("media_player")
    server.stop()


def test_one_environment_runs_free_tasks_on_the_url_and_checked_suite_tasks(page: str) -> None:
    env = SeagentEnv(url=page, max_steps=3)
    try:
        observation, _ = env.reset(options={"task": url_task(page, "Open the Audio menu.")})
        audio = next(line for line in observation["text"].splitlines() if line.endswith('button "Audio"'))
        assert observation["goal"] == "Open the Audio menu." and "  " not in observation["text"]  # compact text
        observation, _, terminated, _, info = env.step(f"click({audio.split(']')[0][1:]})")
        assert not terminated and info["screen"] == observation["text"] and 'menu "Audio"' in info["screen"]
        _, _, terminated, _, info = env.step("finished()")
        assert terminated and info["success"] is False  # no checker: only a judge can say it was done
        # a held-out suite task in the same environment: its own page, state and checker
        observation, info = env.reset(options={"task": make_task("media_player/mute_audio/1000001").to_platform()})
        assert "127.0.0.1" in observation["url"] and info["goal"]
    finally:
        env.close()
    broken = SeagentEnv(url="http://example.com/app/")
    try:
        with pytest.raises(UrlUnavailable, match="not on loopback"):
            broken.reset(options={"task": url_task("http://example.com/app/", "Do it.")})
    finally:
        broken.close()


def test_exploration_writes_a_guidebook_of_controls_and_their_effects(page: str) -> None:
    source = Curriculum(lambda *a, **k: [], split="train", seed=0, batch_size=4, url=page, explore_episodes=4,
                        max_children=2)  # fmt: skip
    batch = source.next(0)
    book = source.guidebook
    assert len(book) == 3  # the first look is one of the 4 episodes
    assert "Media" in book and "Media > Add to Playlist…" in book
    assert book["Media"]["effect"].startswith('~ button "Media"') and '+ menu "Media"' in book["Media"]["effect"]
    assert all(t.params["params"]["url"] == page and t.instruction.endswith(".") for t in batch)


def test_the_judges_data_is_labelled_by_the_checker_and_the_experts_path(tmp_path: Path) -> None:
    (task,) = [make_task("media_player/mute_audio/3").to_platform()]
    records = record_tasks([task], workers=1, root=tmp_path)
    kinds = {r["kind"]: r for r in records}
    assert set(kinds) == {"expert", "prefix", "deviation", "random"}
    expert = kinds["expert"]
    assert expert["success"] and expert["first_error"] is None and expert["actions"][-1] == "finished()"
    assert len(expert["screens"]) == len(expert["actions"]) + 1
    assert not kinds["prefix"]["success"] and kinds["prefix"]["first_error"] == len(kinds["prefix"]["actions"]) - 1
    for record in records:  # the final state is kept, and the task's own checker reads it as the recording did
        assert checker_says(record["task_id"], record["state"]) == record["success"]
        if not record["success"]:
            assert 0 <= record["first_error"] < len(record["actions"])
    assert record_tasks([task], workers=1, root=tmp_path) == records  # cached
