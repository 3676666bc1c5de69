"""One DocOS episode in Chromium: the agent loop's tools over a randomized layout, then the app's own menus.

The agent here is a script that does what the trained policy is taught to: search with the instruction, open
the target page, click the menu and the label the page names. The layout relabels the command, so the default
label is not on screen; the episode succeeds only by reading, and its TUI halves are both met. Once with the
element ids of the screen, once with the page's words as they are (`click_label`)."""

from __future__ import annotations

import pytest

from raygent.environments.web.agent.env import CompactWebEnv
from raygent.environments.web.doc_tools import followed, open_call, read_command, same_name, search_call, tui_found
from raygent.environments.web.docs.urls import command_path
from raygent.environments.web.observe import parse
from raygent.environments.web.registry import make_task
from raygent.environments.web.server import ui_spec
from raygent.jobs.docos.loop import DocLoop
from raygent.platform.rl.agent_loop import EnvAction, LoopContext, ToolResult
from raygent.policies.prompts import PromptFormat

pytestmark = pytest.mark.browser
APP, CMD = "media_player", "shuffle"


def _element(screen: str, name: str, menu_item: bool) -> int:
    for element in parse(screen):
        if (
            element.id is not None
            and element.role.startswith("menuitem") == menu_item
            and same_name(element.name, name)
        ):
            return element.id
    raise LookupError(f"{name!r} not on screen:\n{screen}")


@pytest.mark.parametrize("grounding", ["id", "label"])
def test_reading_the_docs_solves_a_task_on_a_relabelled_layout(grounding: str) -> None:
    default = ui_spec(APP, 0).commands[CMD]
    layout = next(s for s in range(1, 300) if ui_spec(APP, s).commands[CMD].label != default.label)
    task = make_task(f"{APP}/toggle_shuffle/5", ui_seed=layout).to_platform()
    tags = {"docs": "tools", "doc_commands": [CMD], "doc_targets": [command_path(APP, CMD)]}
    task = task.model_copy(update={"params": {**task.params, **tags}})
    env = CompactWebEnv(app=APP)
    try:
        observation, _ = env.reset(options={"task": task})
        assert default.label not in observation["text"]
        context = LoopContext(tokenizer=None, prompt_format=PromptFormat())
        loop = DocLoop(task, observation, context)
        assert isinstance(loop.act(search_call(task.instruction)), ToolResult)
        rank = next(n for n, h in enumerate(loop.session.last_hits, 1) if h.path == command_path(APP, CMD))
        assert isinstance(loop.act(open_call(rank)), ToolResult)
        read = read_command(loop.docs)
        assert read is not None
        turns, info = [], {}
        for name, is_item in ((read[0], False), (read[1], True)):
            screen = str(loop.current.info["screen"])
            by_id = f"click({_element(screen, name, is_item)})"
            action = by_id if grounding == "id" else f'click_label("{name}")'
            assert isinstance(loop.act(action), EnvAction)
            turns.append((screen, action))
            observation, reward, _, _, info = env.step(action)
            loop.observe(observation, float(reward), info)
        assert info["success"]
        assert tui_found(loop.session.opened, info.get("visited_urls", []), task.params["doc_targets"])
        assert followed(turns, ui_spec(APP, layout), CMD)
    finally:
        env.close()
