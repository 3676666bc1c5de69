"""Representative ToolCalc text for training a tokenizer: expert episodes, every error text, the full charset."""

from __future__ import annotations

from raygent.environments.toolcalc.env import DONE_TEXT, ToolCalcEnv
from raygent.environments.toolcalc.expert import demonstrate
from raygent.environments.toolcalc.grammar import (
    ANSWER_ERROR,
    CHARSET,
    PARSE_ERROR,
    UNKNOWN_TOOL_ERROR,
    render_calc_error,
)
from raygent.environments.toolcalc.tasks import DIFFICULTY_RANGES, TASK_TYPES, generate_tasks

ERROR_TEXTS: tuple[str, ...] = (
    PARSE_ERROR,
    UNKNOWN_TOOL_ERROR.format(name="lookup"),
    ANSWER_ERROR,
    render_calc_error("too many operations (max 1)"),
    render_calc_error("unexpected '/'"),
    render_calc_error("incomplete expression"),
    render_calc_error("missing ')'"),
    render_calc_error("empty expression"),
    render_calc_error("number too large"),
    render_calc_error("too deeply nested"),
    render_calc_error("number too long"),
    render_calc_error("expression too long"),
)


def corpus(n_tasks: int = 3000, seed: int = 0) -> list[str]:
    """Text for a tokenizer: one line per expert episode, then the error texts and a line of every character.

    An episode line interleaves the observations and actions the policy reads and writes, separated by newlines
    (``What is 37*12+5?\\ncalc(37*12)\\nresult: 444\\n...``). Tasks come from the `train` split only, spread over
    every task type and difficulty, so held-out tasks never reach the tokenizer.
    """
    env = ToolCalcEnv()
    tasks = generate_tasks(n_tasks, seed=seed, split="train", task_types=TASK_TYPES, difficulty=list(DIFFICULTY_RANGES))
    lines: list[str] = []
    for task in tasks:
        demo = demonstrate(task, env)
        turns = [text for turn in demo.turns() for text in turn]
        lines.append("\n".join([*turns, DONE_TEXT]))
    lines.extend(ERROR_TEXTS)
    lines.append(CHARSET)
    return lines
