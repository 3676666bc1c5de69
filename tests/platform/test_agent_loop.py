"""The default chat loop's record of an episode: each turn keeps the environment's error for its action, which
`PromptFormat.last_action` shows the agent."""

from __future__ import annotations

from raygent.platform.contracts import Task
from raygent.platform.rl.agent_loop import ChatLoop, EnvAction, LoopContext
from raygent.policies.prompts import PromptFormat

TASK = Task(id="t/1", env="raygent/ToolCalc-v0", instruction="Mute the sound.")


def test_each_turn_keeps_its_actions_error_and_the_prompt_shows_the_last_one() -> None:
    fmt = PromptFormat(max_history=0, last_action=True)
    loop = ChatLoop(TASK, {"text": "screen 1"}, LoopContext(tokenizer=None, prompt_format=fmt))
    assert loop.messages()[-1].content == "Task: Mute the sound.\n\nLast action: none\nObservation:\nscreen 1"
    assert loop.act('click_label("Sound")') == EnvAction('click_label("Sound")')
    loop.observe({"text": "screen 1", "last_action_error": "no element named 'Sound'"}, 0.0, {})
    assert loop.act('click_label("Audio")') == EnvAction('click_label("Audio")')
    loop.observe({"text": "screen 2", "last_action_error": ""}, 0.0, {})
    assert [(t.action, t.error) for t in loop.history] == [
        ('click_label("Sound")', "no element named 'Sound'"),
        ('click_label("Audio")', ""),
    ]
    assert loop.messages()[-1].content.endswith('Last action: click_label("Audio")\nObservation:\nscreen 2')
