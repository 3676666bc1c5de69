"""ReasonAug: a procedural person re-identification world, a frozen instruction-driven generator and the
one-step augmentation environment (issue 21, second half).

Modules: `world` (identities, nuisances, the instruction grammar, the renderer G, the long-tail train prior),
`tasks` (anchors as tasks, the heuristic instruction writer, random instructions, tokenizer text), `env`
(`AugmentationEnv`, `register_envs`), `data` (the arrays the ReID models train and evaluate on).
"""

from raygent.environments.reasonaug.env import AugmentationEnv, encode_image, register_envs
from raygent.environments.reasonaug.tasks import (
    ENV_ID,
    corpus,
    heuristic_instruction,
    random_instruction,
    reasonaug_demonstrations,
    reasonaug_tasks,
)
from raygent.environments.reasonaug.world import (
    SLOT_CLASS,
    SLOTS,
    InstructionError,
    WorldSizes,
    build_world,
    format_instruction,
    parse_instruction,
    render,
)

__all__ = [
    "ENV_ID",
    "SLOTS",
    "SLOT_CLASS",
    "AugmentationEnv",
    "InstructionError",
    "WorldSizes",
    "build_world",
    "corpus",
    "encode_image",
    "format_instruction",
    "heuristic_instruction",
    "parse_instruction",
    "random_instruction",
    "reasonaug_demonstrations",
    "reasonaug_tasks",
    "register_envs",
    "render",
]
