"""Screenshots of example trajectories for the report, taken by replaying their actions in the browser.

The rollout workers record text observations only (a screenshot per step of every training and evaluation
episode would cost more browser time than the episodes themselves on 2 cores). For the handful of
trajectories a report shows, `capture` replays each one's recorded actions in a fresh `BrowserEnv` with the
same task, saves a downscaled PNG of the screen each action was taken on (`examples/<n>_<step>.png` in the run
directory), and adds its path to the step. The apps are deterministic given the task and the actions, so the
replay shows the episode; `replayed_success` says whether the replay ended as the episode did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from raygent.environments.web.agent.env import release_thread_browser, thread_browser
from raygent.environments.web.env import BrowserEnv

EXAMPLES_DIR = "examples"


def _save(array: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path, optimize=True)


def capture(examples: list[dict[str, Any]], run_dir: Path, size: tuple[int, int] = (480, 300)) -> list[dict[str, Any]]:
    """The examples with `screenshot` (a path relative to `run_dir`) on each step and `replayed_success`.

    Each example needs `task_id` (as `AgentTrainer.examples` gives it) and its steps' `action`s; the final
    screen after the last action is added as a step of its own with the action `(end)`.
    """
    host = thread_browser()
    env = BrowserEnv(browser=host, screenshot=size)
    captured = []
    try:
        for number, example in enumerate(examples):
            observation, _ = env.reset(options={"task": example["task_id"]})
            steps, info = [], {}
            for index, step in enumerate(example["steps"]):
                shot = Path(EXAMPLES_DIR) / f"{number}_{index}.png"
                _save(observation["screenshot"], run_dir / shot)
                steps.append({**step, "screenshot": str(shot)})
                observation, _, terminated, truncated, info = env.step(step["action"])
                if terminated or truncated:
                    break
            shot = Path(EXAMPLES_DIR) / f"{number}_end.png"
            _save(observation["screenshot"], run_dir / shot)
            steps.append(
                {"observation": "(the screen after the last action)", "action": "(end)", "screenshot": str(shot)}
            )
            captured.append({**example, "steps": steps, "replayed_success": bool(info.get("success", False))})
    finally:
        env.close()
        release_thread_browser(host)
    return captured
