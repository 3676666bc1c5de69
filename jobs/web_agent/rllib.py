"""The RLlib baseline on the web suite: the discrete web environment registered with Ray Tune, an action-masking
PPO module, a success metric, and a small CPU-friendly `PPOConfig` (RLlib's new API stack).

- `register()` registers `"raygent-web-discrete"` (`ENV_NAME`) with `ray.tune.registry.register_env`; its
  creator builds `environments/web/discrete.make_discrete_env(env_config)`: a `BrowserEnv` over an app by name
  (any registered app), or whatever the `factory` key's `"module:attr"` builds (`ppo_config(env_factory=...)`:
  external pages, another environment). Each EnvRunner actor is one worker process with its own Chromium
  (`BrowserEnv`'s shared browser).
- Two policies, both masking the logits of actions the `action_mask` forbids (pushed to the float minimum, the
  pattern of RLlib's action-masking example, written here so that no example module is imported):
  `ElementScorerRLModule` (`policy="elements"`, the default) scores every element slot with one small MLP
  shared across slots (its input: the slot's features, the global features and the slot's position), so
  what it learns about "the button whose name is the file in the instruction" holds at every position; the
  keys and the value come from MLPs over the global features and the max-pooled slot embeddings.
  `MaskedPPOTorchRLModule` (`policy="flat"`) is RLlib's default PPO MLP over the whole flat feature vector,
  which must learn each (action type, slot) logit separately.
- `WebSuccessCallback`: logs each finished episode's `info["success"]` (the environment's explicit success, so a
  reward discounted by time still counts) and infrastructure failures, as sums,
  overall and per template, so `success_rate(result)` is the share of this iteration's episodes that solved
  their task and `template_counts(result)` says which templates.
- `ppo_config(...)`: PPO on one app's tasks (atomic by default) with few env runners, a small batch and a small
  MLP; the benchmark (`bench/rllib_ppo.py`) and the test (`tests/jobs/test_web_rllib.py`) build from it.

The baseline learns an MLP over hand-made features; it is not SEAgent's VLM policy (see `discrete.py`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env
from torch import Tensor, nn

from raygent.environments.web.discrete import (
    FEATURES,
    KEYS,
    MASK,
    DiscreteWebEnv,
    Encoding,
    load_factory,
    make_discrete_env,
)

ENV_NAME = "raygent-web-discrete"

EPISODE_RETURN_MEAN = "env_runners/episode_return_mean"
"""RLlib's smoothed mean episode return (over `metrics_num_episodes_for_smoothing` episodes)."""
EPISODES_DONE = "web_episodes"
EPISODES_SOLVED = "web_episodes_solved"
EPISODES_INFRA_FAILED = "web_episodes_infra_failed"
TEMPLATE_EPISODES = "web_template_episodes"
TEMPLATE_SOLVED = "web_template_solved"
"""Sums `WebSuccessCallback` logs per iteration, reported under `env_runners/` (the template ones nested by
template name)."""


def create_env(env_config: Mapping[str, Any]) -> DiscreteWebEnv:
    """The env creator RLlib calls in each EnvRunner (its `EnvContext` is a dict of `make_discrete_env` keys
    that also carries the runner's `worker_index`, which `cpus: "worker"` reads)."""
    return make_discrete_env(env_config)


def register() -> str:
    """Register `ENV_NAME` with Ray Tune's registry (idempotent; call in the driver before building PPO)."""
    register_env(ENV_NAME, create_env)
    return ENV_NAME


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO torch module over `obs["observations"]`, with `obs["action_mask"]` applied to the logits.

    The networks are built for the features' Box; `self.observation_space` stays the Dict the env reports.
    Batches are never mutated: each forward splits the Dict observation into a shallow copy of the batch.
    """

    def __init__(self, *, observation_space: Any = None, **kwargs: Any) -> None:
        self.masked_observation_space = observation_space
        features = observation_space[FEATURES] if observation_space is not None else None
        super().__init__(observation_space=features, **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self.masked_observation_space

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = _split(batch)
        return _masked(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = _split(batch)
        return _masked(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


class ElementScorerRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO policy and value over the discrete web encoding, scoring element slots with one shared MLP.

    `model_config`: `encoding` (the `Encoding` fields), `hidden` (the slot scorer's layers, default `[64, 64]`),
    `value_hidden` (default `[128, 128]`). Logit layout as `discrete.py`'s action index: for each action type
    (the verbs, then typing each text slot), one logit per element slot; then the keys.
    Shapes: features `(B, K*P + G)` -> slot inputs `(B, K, P + G + 1)` -> embeddings `(B, K, H)` -> logits
    `(B, (V+S)*K + len(KEYS))`.
    """

    def setup(self) -> None:
        if not isinstance(self.model_config, Mapping) or "encoding" not in self.model_config:
            raise ValueError("ElementScorerRLModule needs a model_config dict with the `encoding` fields")
        config = dict(self.model_config)
        self.encoding = Encoding(**config["encoding"])
        enc = self.encoding
        hidden = list(config.get("hidden", [64, 64]))
        self.slot_trunk = _mlp(enc.per_element + enc.globals + 1, hidden)
        self.slot_head = nn.Linear(hidden[-1], len(enc.verbs) + enc.text_slots)
        keys_out = nn.Linear(hidden[-1], len(KEYS))
        self.keys_head = nn.Sequential(_mlp(enc.globals + hidden[-1], hidden[-1:]), keys_out)
        value_hidden = list(config.get("value_hidden", [128, 128]))
        self.value_net = nn.Sequential(_mlp(enc.size, value_hidden), nn.Linear(value_hidden[-1], 1))
        for head in (self.slot_head, keys_out):
            nn.init.normal_(head.weight, std=0.01)
            nn.init.zeros_(head.bias)
        self.register_buffer("positions", (torch.arange(enc.elements, dtype=torch.float32) / enc.elements)[:, None])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = _split(batch)
        return _masked({Columns.ACTION_DIST_INPUTS: self._logits(inner[Columns.OBS])}, mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward(batch, **kwargs)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Tensor:
        _, inner = _split(batch)
        return self.value_net(inner[Columns.OBS]).squeeze(-1)

    def _logits(self, features: Tensor) -> Tensor:
        enc = self.encoding
        size = enc.elements * enc.per_element
        rows = features[..., :size].reshape(*features.shape[:-1], enc.elements, enc.per_element)
        context = features[..., size:]
        expanded = context.unsqueeze(-2).expand(*rows.shape[:-1], enc.globals)
        positions = self.positions.expand(*rows.shape[:-1], 1)
        embedded = self.slot_trunk(torch.cat([rows, expanded, positions], dim=-1))
        per_slot = self.slot_head(embedded).transpose(-1, -2).flatten(-2)  # (action type, slot) order
        present = rows[..., :1] > 0
        pooled = torch.where(present, embedded, torch.zeros_like(embedded)).amax(dim=-2)
        keys = self.keys_head(torch.cat([context, pooled], dim=-1))
        return torch.cat([per_slot, keys], dim=-1)


def _mlp(inputs: int, hidden: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    return nn.Sequential(*layers)


def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    observation = batch[Columns.OBS]
    if not isinstance(observation, Mapping):
        return None, batch
    return observation[MASK], {**batch, Columns.OBS: observation[FEATURES]}


def _masked(output: dict[str, Any], mask: Any) -> dict[str, Any]:
    if mask is not None:
        output[Columns.ACTION_DIST_INPUTS] = output[Columns.ACTION_DIST_INPUTS] + torch.clamp(
            torch.log(mask), min=FLOAT_MIN
        )
    return output


class WebSuccessCallback(RLlibCallback):
    """Counts finished episodes, solved ones and infrastructure failures, overall and per task template (sums per
    iteration)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        info = episode.get_infos(-1) or {}
        solved = int(bool(info.get("success")))
        metrics_logger.log_value(EPISODES_DONE, 1, reduce="sum")
        metrics_logger.log_value(EPISODES_SOLVED, solved, reduce="sum")
        metrics_logger.log_value(EPISODES_INFRA_FAILED, int(bool(info.get("infra_failure"))), reduce="sum")
        parts = str(info.get("task_id", "")).split("/")
        if len(parts) == 3:
            metrics_logger.log_value((TEMPLATE_EPISODES, parts[1]), 1, reduce="sum")
            metrics_logger.log_value((TEMPLATE_SOLVED, parts[1]), solved, reduce="sum")


def _count(value: Any) -> int:
    """A logged sum as an int; RLlib reports NaN for a sum that got no values this iteration."""
    number = float(value) if value is not None else 0.0
    return 0 if math.isnan(number) else int(number)


def success_rate(result: Mapping[str, Any]) -> float | None:
    """The share of this iteration's finished episodes that succeeded (None when none finished)."""
    runners = result.get("env_runners", {})
    done = _count(runners.get(EPISODES_DONE))
    return _count(runners.get(EPISODES_SOLVED)) / done if done else None


def template_counts(result: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """`{template: (episodes, solved)}` of the templates with episodes that finished in this iteration."""
    runners = result.get("env_runners", {})
    episodes, solved = runners.get(TEMPLATE_EPISODES) or {}, runners.get(TEMPLATE_SOLVED) or {}
    counts = {name: (_count(count), _count(solved.get(name))) for name, count in sorted(episodes.items())}
    return {name: pair for name, pair in counts.items() if pair[0]}


def metric(result: Mapping[str, Any], key: str) -> Any:
    """A `/`-separated key (`env_runners/episode_return_mean`) looked up in RLlib's nested result dict."""
    value: Any = result
    for part in key.split("/"):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


POLICIES = ("elements", "flat")


def module_spec(policy: str, encoding: Encoding, hidden: Sequence[int] | None = None) -> RLModuleSpec:
    """The `RLModuleSpec` of `policy` (`"elements"` or `"flat"`, see the module docstring) for `encoding`."""
    if policy == "flat":
        layers = list(hidden or (128, 128))
        return RLModuleSpec(
            module_class=MaskedPPOTorchRLModule,
            model_config=DefaultModelConfig(fcnet_hiddens=layers, fcnet_activation="relu"),
        )
    return RLModuleSpec(
        module_class=ElementScorerRLModule,
        model_config={"encoding": asdict(encoding), "hidden": list(hidden or (64, 64)), "value_hidden": [128, 128]},
    )


def ppo_config(
    app: str = "code_editor",
    *,
    difficulties: Sequence[int] = (1,),
    templates: Sequence[str] | None = None,
    ui_seed: int | None = 0,
    max_steps: int = 6,
    num_env_runners: int = 2,
    train_batch_size: int = 256,
    minibatch_size: int = 64,
    num_epochs: int = 8,
    lr: float = 1e-3,
    gamma: float = 0.95,
    entropy_coeff: float = 0.01,
    policy: str = "elements",
    hidden: Sequence[int] | None = None,
    verbs: Sequence[str] | None = ("click",),
    seed: int | None = 0,
    env_overrides: Mapping[str, Any] | None = None,
    env_factory: str | None = None,
) -> PPOConfig:
    """PPO (new API stack) on `app`'s tasks of `difficulties`, CPU-sized.

    Env runners take one CPU each (each runs a Chromium, pinned to the core of its worker index:
    `env_overrides={"cpus": None}` leaves them free); the learner runs in the driver (`num_learners=0`).
    `ui_seed=0` keeps the default menu layout (None draws one per episode: the agent would need the docs).
    `verbs` are the element action types (default: `click`, all the code editor's atomic tasks need besides
    typing and keys; None: all of `discrete.VERBS`); `max_steps=6` fits the longest atomic solution (5
    actions); `env_overrides` adds `make_discrete_env` keys (encoding sizes, `wait_s`, ...); `env_factory`
    (`"module:attr"`) builds each runner's environment from the env config instead (checked here, in the
    driver, before any runner starts). `policy`: `"elements"`
    (`ElementScorerRLModule`, slot scorer layers `hidden`, default `[64, 64]`) or `"flat"`
    (`MaskedPPOTorchRLModule`, RLlib's MLP with layers `hidden`, default `[128, 128]`).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    register()
    env_config: dict[str, Any] = {
        "app": app,
        "difficulties": list(difficulties),
        "templates": list(templates) if templates else None,
        "ui_seed": ui_seed,
        "max_steps": max_steps,
        "verbs": list(verbs) if verbs else None,
        "cpus": "worker",  # each runner's browser on a core of its own (see environments/web/browser.py)
        **dict(env_overrides or {}),
    }
    if env_factory is not None:
        load_factory(env_factory)
        env_config["factory"] = env_factory
    config = (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(ENV_NAME, env_config=env_config)
        .framework("torch")
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=1,
            num_cpus_per_env_runner=1,
            rollout_fragment_length="auto",
            sample_timeout_s=900.0,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=gamma,
            lambda_=0.95,
            entropy_coeff=entropy_coeff,
            vf_loss_coeff=0.5,
        )
        .rl_module(rl_module_spec=module_spec(policy, Encoding.from_config(env_config), hidden))
        .callbacks(WebSuccessCallback)
        .reporting(metrics_num_episodes_for_smoothing=20)
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config
