"""reasonaug: an instruction policy learns which edits of a frozen generator help a person re-identification model,
with the ReID model retrained on the accepted edits in the loop (issue 21, second half).

Stages (`raygent run reasonaug`):

1. the world's arrays (`environments/reasonaug/data.py`) into `RUN_DIR/reasonaug_data.npz`; the starting ReID model
   f (triplet loss on the real, long-tail training views) and the frozen reference judge f_0 (real views plus
   identity-preserving renders) into `RUN_DIR/reid/` (reused from `$RAYGENT_CACHE/reasonaug` for the same world
   and settings); f's round-0 mAP / Rank-1 on the held-out query/gallery split;
2. a `tiny-qwen2` policy (or `policy.model`, e.g. `smollm2-135m-instruct`) SFT'd on the heuristic instruction
   writer, then GRPO through the RL core with MAGR (`rewards/reasonaug/magr.py`) as the judge stage's reward model and
   the selective entropy term (`entropy.py`) beside the GRPO term; the reward actor owns f and retrains it on
   the accepted edits every `reward.kwargs.retrain_every` steps (`RUN_DIR/reid/reid.jsonl`);
3. the table: f's mAP and Rank-1 at round 0 and after the last round, the acceptance and identity-change rates of
   the edits, in `reasonaug.json`, `summary.json` and the report.

`reasonaug.variant` switches the loop with the same code: `closed` (default), `nogate`, `open`, `random`, `none`
(`ReasonAugSection`; `bench/reasonaug.py` runs them over seeds).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator
from rich.console import Console
from rich.table import Table

from raygent.environments.reasonaug.data import build_arrays, write_arrays
from raygent.environments.reasonaug.tasks import corpus, world_sizes
from raygent.platform.config import JobConfig
from raygent.platform.rl.initial import initial_model
from raygent.platform.rl.recipe import AgentRecipe, Setup, Trained
from raygent.platform.rl.settings import AgentRunConfig
from raygent.policies.cache import cache_root
from raygent.rewards.reasonaug.magr import (
    CALLS_FILE,
    INITIAL_FILE,
    REFERENCE_FILE,
    ROUNDS_FILE,
    MAGRSettings,
    read_jsonl,
)
from raygent.rewards.reasonaug.reid import ReIDSettings, build_model, evaluate, make_optimizer, state_of, train_steps

MAGR_ENTRY = "raygent.rewards.reasonaug.magr:MAGR"
SAE_ENTRY = "raygent.jobs.reasonaug.entropy:SelectiveEntropy"
Variant = Literal["closed", "nogate", "open", "random", "none"]


class ReasonAugSection(BaseModel):
    """`reasonaug:` the variant of the loop, and the reference judge's data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: Variant = "closed"
    """closed: GRPO on MAGR, ReID retrained on gated edits. nogate: the same with the gate off (every valid edit
    accepted, hardness paid whatever the identity). open: the SFT policy's fixed instruction distribution (its
    update zeroed), gated. random: uniformly random identity-preserving edits, gated. none: no edit accepted."""
    judge_per_id: int = Field(default=8, ge=1)
    """Identity-preserving renders per train identity for the frozen reference judge."""
    cache: bool = True
    """Reuse the starting ReID model and the judge of the same world and settings (`$RAYGENT_CACHE/reasonaug`)."""


class ReasonAugRunConfig(AgentRunConfig):
    """`AgentRunConfig` and the `reasonaug:` section; the reward must be MAGR in one actor (its kwargs are checked
    by `MAGR.Settings`, `env.kwargs` by the environment's, `env.task_kwargs` against `reasonaug_tasks`)."""

    reasonaug: ReasonAugSection = ReasonAugSection()

    @model_validator(mode="after")
    def _needs_magr(self) -> ReasonAugRunConfig:
        if self.reward is None:
            raise ValueError(f"reward: ReasonAug needs its reward model ({MAGR_ENTRY})")
        if self.reward.entry != MAGR_ENTRY:
            raise ValueError(f"reward.entry: ReasonAug's loop lives in its reward model; expected {MAGR_ENTRY!r}")
        if self.reward.num_actors != 1:
            raise ValueError("reward.num_actors: MAGR owns the ReID model of the closed loop, so it runs in 1 actor")
        return self


DATA_FILE = "reasonaug_data.npz"
STATE_DIR = "reid"
ROUND0_FILE = "round0.json"
RESULTS_FILE = "reasonaug.json"


def prepare_reid(
    state_dir: Path, arrays: dict[str, np.ndarray], reid: ReIDSettings, seed: int, key: str, cache: bool
) -> dict[str, Any]:
    """The starting model (`initial.pt`), the judge (`reference.pt`) and round 0's metrics in `state_dir` (from the
    cache when `cache` and present); returns round 0's metrics."""
    state_dir.mkdir(parents=True, exist_ok=True)
    cached = cache_root("reasonaug", key)
    names = (INITIAL_FILE, REFERENCE_FILE, ROUND0_FILE)
    if not all((state_dir / n).exists() for n in names):
        if cache and all((cached / n).exists() for n in names):
            for name in names:
                shutil.copy(cached / name, state_dir / name)
        else:
            torch.set_num_threads(reid.threads)
            begin = time.perf_counter()
            rng = np.random.default_rng([seed, 1])
            model = build_model(reid, seed)
            train_steps(
                model, make_optimizer(model, reid), arrays["train_x"], arrays["train_y"], reid.pretrain_steps, reid, rng
            )
            judge = build_model(reid, seed + 1)
            judge_x = np.concatenate([arrays["train_x"], arrays["judge_x"]])
            judge_y = np.concatenate([arrays["train_y"], arrays["judge_y"]])
            train_steps(judge, make_optimizer(judge, reid), judge_x, judge_y, reid.judge_steps, reid, rng)
            split = (arrays["query_x"], arrays["query_y"], arrays["gallery_x"], arrays["gallery_y"])
            round0 = {
                **evaluate(model, *split),
                "judge": evaluate(judge, *split),
                "seconds": time.perf_counter() - begin,
            }
            torch.save(state_of(model), state_dir / INITIAL_FILE)
            torch.save(state_of(judge), state_dir / REFERENCE_FILE)
            (state_dir / ROUND0_FILE).write_text(json.dumps(round0))
            if cache:
                tmp = cached.with_name(cached.name + f".{os.getpid()}.tmp")
                tmp.mkdir(parents=True, exist_ok=True)
                for name in names:
                    shutil.copy(state_dir / name, tmp / name)
                try:
                    tmp.rename(cached)
                except OSError:  # another run cached it first
                    shutil.rmtree(tmp, ignore_errors=True)
    return dict(json.loads((state_dir / ROUND0_FILE).read_text()))


def with_variant(agent: ReasonAugRunConfig, data: Path, state_dir: Path) -> ReasonAugRunConfig:
    """The run's sections with the variant applied and the reward's paths filled in."""
    assert agent.reward is not None
    variant = agent.reasonaug.variant
    kwargs = {**agent.reward.kwargs, "data": str(data), "state_dir": str(state_dir), "seed": agent.trainer.seed}
    env_kwargs = dict(agent.env.kwargs)
    terms = [dict(t) for t in agent.learner.loss.terms]
    if variant == "nogate":
        kwargs["gate"] = "off"
    if variant in ("open", "random", "none"):  # a fixed instruction distribution: the policy's update is zeroed
        terms = [{**t, "coef": 0.0} for t in terms]
    if variant == "random":
        env_kwargs["instruction"] = "random"
    if variant == "none":
        kwargs["accept"] = "none"
    loss = agent.learner.loss.model_copy(update={"terms": tuple(terms)})
    return agent.model_copy(
        update={
            "reward": agent.reward.model_copy(update={"kwargs": kwargs}),
            "env": agent.env.model_copy(update={"kwargs": env_kwargs}),
            "learner": agent.learner.model_copy(update={"loss": loss}),
        }
    )


def with_tokenizer(agent: ReasonAugRunConfig, model_path: str) -> ReasonAugRunConfig:
    """The selective entropy term pointed at the policy's tokenizer."""
    terms = tuple(
        {**t, "tokenizer": t.get("tokenizer") or model_path} if t.get("name") == SAE_ENTRY else dict(t)
        for t in agent.learner.loss.terms
    )
    loss = agent.learner.loss.model_copy(update={"terms": terms})
    return agent.model_copy(update={"learner": agent.learner.model_copy(update={"loss": loss})})


def loop_summary(round0: dict[str, Any], rounds: list[dict[str, Any]], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The numbers of a run: f's metrics at round 0 and after the last round, and what the loop accepted."""
    last = rounds[-1] if rounds else {"map": round0["map"], "rank1": round0["rank1"], "pool": 0}
    tail = calls[len(calls) // 2 :] or calls  # the second half of the run: what the policy learned to write

    def mean(key: str, records: list[dict[str, Any]]) -> float:
        values = [float(r[key]) for r in records if key in r and r[key] == r[key]]
        return float(np.mean(values)) if values else float("nan")

    return {
        "map_before": round0["map"],
        "rank1_before": round0["rank1"],
        "map_after": last["map"],
        "rank1_after": last["rank1"],
        "judge_map": round0.get("judge", {}).get("map", float("nan")),
        "rounds": len(rounds),
        "pool": last.get("pool", 0),
        "pool_identity_changed": last.get("pool_identity_changed", 0.0),
        "accepted": mean("accepted", calls),
        "valid": mean("valid", calls),
        "identity_changed_first": mean("identity_changed", calls[: max(len(calls) // 4, 1)]),
        "identity_changed_last": mean("identity_changed", tail),
        "changed_rejected": mean("changed_rejected", calls),
        "s_id_kept": mean("s_id_kept", calls),
        "s_id_changed": mean("s_id_changed", calls),
        "hard_first": mean("hard", calls[: max(len(calls) // 4, 1)]),
        "hard_last": mean("hard", tail),
        "curve": [{"round": 0, "map": round0["map"], "rank1": round0["rank1"]}]
        + [{"round": r["round"], "map": r["map"], "rank1": r["rank1"], "pool": r["pool"]} for r in rounds],
    }


class ReasonAug(AgentRecipe):
    name = "reasonaug"
    summary = "GRPO of an augmentation-instruction policy with a gated reward, ReID retrained in the loop"
    claim = (
        "mAP: closed loop > open loop > random augmentation >= none; without the gate identity-changing edits are "
        "accepted and mAP falls (bench/reasonaug.py measures it over seeds)"
    )
    config_model = ReasonAugRunConfig
    examples_kept = (4, 1)

    def prepare(self, agent: Any, run_dir: Path, console: Console) -> Setup:
        assert agent.reward is not None
        task_kwargs = dict(agent.env.task_kwargs)
        world_seed, sizes = int(task_kwargs.get("world_seed", 0)), world_sizes(task_kwargs)
        magr = MAGRSettings.model_validate(agent.reward.kwargs)
        data, state_dir = run_dir / DATA_FILE, run_dir / STATE_DIR
        arrays = build_arrays(world_seed, sizes, agent.reasonaug.judge_per_id)
        if not data.exists():
            write_arrays(data, arrays)
        key_text = json.dumps(
            [
                world_seed,
                sizes.__dict__,
                agent.reasonaug.judge_per_id,
                agent.trainer.seed,
                magr.reid.model_dump(exclude={"threads", "round_steps", "pool_max"}),
            ],
            sort_keys=True,
        )
        key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
        round0 = prepare_reid(state_dir, arrays, magr.reid, agent.trainer.seed, key, agent.reasonaug.cache)
        console.print(
            f"ReID round 0: mAP {round0['map']:.3f} Rank-1 {round0['rank1']:.3f} "
            f"(judge mAP {round0['judge']['map']:.3f})"
        )
        agent = with_variant(agent, data, state_dir)
        text = corpus(600, world_seed) if agent.policy.model is None else []
        # the reward model reads the policy's tokenizer: the model is built here (`initial_model` builds it once)
        agent = with_tokenizer(agent, initial_model(agent, run_dir, text))
        return Setup(tokenizer_text=text, agent=agent, state={"round0": round0, "world_seed": world_seed})

    def report(
        self, config: JobConfig, agent: Any, run_dir: Path, trained: Trained, console: Console
    ) -> dict[str, Any]:
        state_dir = run_dir / STATE_DIR
        round0, world_seed = trained.setup.state["round0"], trained.setup.state["world_seed"]
        numbers = loop_summary(round0, read_jsonl(state_dir / ROUNDS_FILE), read_jsonl(state_dir / CALLS_FILE))
        variant = agent.reasonaug.variant
        results = {"variant": variant, "seed": agent.trainer.seed, "world_seed": world_seed, **numbers}
        (run_dir / RESULTS_FILE).write_text(json.dumps(results, indent=2))
        rows = [
            ("ReID mAP", numbers["map_before"], numbers["map_after"]),
            ("ReID Rank-1", numbers["rank1_before"], numbers["rank1_after"]),
            ("edits changing identity", numbers["identity_changed_first"], numbers["identity_changed_last"]),
            ("MAGR hardness", numbers["hard_first"], numbers["hard_last"]),
        ]
        summary = self.write(
            config, agent, run_dir, trained, rows=rows, extra={k: v for k, v in results.items() if k != "curve"}
        )
        table = Table("", "start", "end", title=f"reasonaug ({variant}, seed {agent.trainer.seed})")
        for name, before, after in rows:
            table.add_row(name, f"{before:.3f}", f"{after:.3f}")
        console.print(table)
        console.print(
            f"accepted {numbers['accepted']:.3f} of the edits; pool {numbers['pool']} "
            f"({numbers['pool_identity_changed']:.3f} identity-changing)"
        )
        return summary
