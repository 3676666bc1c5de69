"""FactGuard: synthetic short videos whose claims an agent verifies with a clip analyzer and a fact-check retriever.

Modules: `world` (the fact-check corpus and the item generator, splits), `tools` (action grammar, BM25 retriever,
clip analyzer, per-episode budgets), `env` (the gymnasium environment and `register_envs`), `tasks` (the task
function), `expert` (the oracle and its demonstrations), `corpus` (tokenizer text). No Ray here: the agent loop
with the tools as Ray actors is the job's (`jobs/factguard/loop.py`).
"""

from raygent.environments.factguard.corpus import corpus
from raygent.environments.factguard.env import FactGuardEnv, first_observation, register_envs
from raygent.environments.factguard.expert import OracleExpert, demonstrate, factguard_demonstrations
from raygent.environments.factguard.tasks import factguard_tasks, make_task
from raygent.environments.factguard.tools import ClipAnalyzer, EpisodeTools, LocalTools, Retriever, parse_action
from raygent.environments.factguard.world import DEFAULT_MIX, ENV_ID, KINDS, LABELS, build_world, generate_item

__all__ = [
    "DEFAULT_MIX",
    "ENV_ID",
    "KINDS",
    "LABELS",
    "ClipAnalyzer",
    "EpisodeTools",
    "FactGuardEnv",
    "LocalTools",
    "OracleExpert",
    "Retriever",
    "build_world",
    "corpus",
    "demonstrate",
    "factguard_demonstrations",
    "factguard_tasks",
    "first_observation",
    "generate_item",
    "make_task",
    "parse_action",
    "register_envs",
]
