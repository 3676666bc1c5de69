"""The agent's starting point: a job config's agent sections, and the model a run starts from.

`initial_model` returns `policy.model` (a real checkpoint directory, loaded by `load_policy` like any other; a
pretrained preset's name such as `smollm2-135m-instruct` becomes its converted directory in the cache) or, when
it is unset, builds a tiny model of `policy.preset` with a byte-level BPE tokenizer trained on the
recipe's own text into `RUN_DIR/init_model` (once: a resumed run finds it there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from raygent.platform.rl.settings import AgentRunConfig
from raygent.policies.loading import resolve_model
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import build_tokenizer

INIT_MODEL = "init_model"

Sections = TypeVar("Sections", bound=AgentRunConfig)


def agent_sections(config: Any, model: type[Sections]) -> Sections:
    """The agent sections (`model`'s fields: policy, env, rollout, ...) of a validated job config."""
    return model.model_validate({name: getattr(config, name) for name in model.model_fields})


def initial_model(config: AgentRunConfig, run_dir: Path, tokenizer_text: list[str]) -> str:
    """`policy.model` (a pretrained preset resolved to its cached directory), or a tiny model of `policy.preset`
    built (once) into `RUN_DIR/init_model`."""
    if config.policy.model is not None:
        return str(resolve_model(config.policy.model))
    directory = run_dir / INIT_MODEL
    if not (directory / "config.json").exists():
        tokenizer = build_tokenizer(tokenizer_text, directory, vocab_size=config.policy.vocab_size)
        build_tiny_model(config.policy.preset, tokenizer, directory, seed=config.trainer.seed)
    return str(directory)
