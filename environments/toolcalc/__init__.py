"""ToolCalc: a multi-turn arithmetic environment with a calculator tool, the RL core's proof environment.

Modules: `grammar` (action and observation strings), `calculator` (safe evaluator), `tasks` (task types,
generator, splits), `checker` (final answer -> reward), `expert` (scripted expert and demonstrations), `env`
(the gymnasium environment and `register_envs`), `corpus` (tokenizer text). Nothing here imports Ray or torch.
"""

from raygent.environments.toolcalc.checker import Verdict, check
from raygent.environments.toolcalc.corpus import corpus
from raygent.environments.toolcalc.env import ToolCalcEnv, register_envs
from raygent.environments.toolcalc.expert import Demonstration, ScriptedExpert, demonstrate
from raygent.environments.toolcalc.tasks import ENV_ID, SPLITS, TASK_TYPES, generate_tasks, make_task, split_of

__all__ = [
    "ENV_ID",
    "SPLITS",
    "TASK_TYPES",
    "Demonstration",
    "ScriptedExpert",
    "ToolCalcEnv",
    "Verdict",
    "check",
    "corpus",
    "demonstrate",
    "generate_tasks",
    "make_task",
    "register_envs",
    "split_of",
]
