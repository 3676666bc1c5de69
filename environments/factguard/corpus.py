"""Representative FactGuard text for training a tokenizer: oracle episodes (train split only), the error texts,
every fact-check article and the action forms a policy may write."""

from __future__ import annotations

from raygent.environments.factguard.env import DONE_TEXT, FactGuardEnv
from raygent.environments.factguard.expert import demonstrate
from raygent.environments.factguard.tasks import factguard_tasks
from raygent.environments.factguard.tools import MAX_WINDOW, PARSE_ERROR, TOOLS
from raygent.environments.factguard.world import build_world, split_of


def corpus(n_tasks: int = 2000, seed: int = 0, world_seed: int = 0) -> list[str]:
    """One line per oracle episode (with and without tools), then error texts, train-split articles, actions."""
    env = FactGuardEnv()
    lines: list[str] = []
    for tools in (True, False):
        for task in factguard_tasks("train", seed, n_tasks // 2, world_seed=world_seed, tools=tools):
            demo = demonstrate(task, env)
            lines.append("\n".join([task.instruction, *(text for turn in demo.turns() for text in turn), DONE_TEXT]))
    lines += [
        PARSE_ERROR,
        "error: no tools in this run",
        *(f"error: {tool} budget used (2 calls)" for tool in TOOLS),
        f"error: at most {MAX_WINDOW} seconds per call",
        "error: the clip has seconds 0 to 7",
        "retrieved: nothing found",
        "verdict(real, 0.5) verdict(fake, 1.0) verdict(real, 0.7) verdict(fake, 0.6) verdict(real, 0.8)",
    ]
    world = build_world(world_seed)
    lines += [a.text for a in world.articles if a.claim is None or split_of(f"kb:{a.claim}") == "train"]
    return lines
