"""The learner: a causal LM, its optimizer and the losses of `platform.losses`, as a plain torch object that
`ray.remote` turns into the learner actor (and `data_parallel` runs inside Ray Train workers).

- `sft(samples)`: one optimizer step of cross-entropy on demonstration responses.
- `grpo(trajectories)`: group-normalized advantages, the sample masks the config asks for (zero-variance groups,
  truncated responses), `updates_per_batch` optimizer steps of the GRPO loss, plus SEAgent's adversarial
  imitation on failure actions and the KL term when their coefficients are on (only then is a frozen reference
  model loaded). The ratio is taken against the learner's own log-probabilities at the start of the update
  (the "proximal" policy); with `off_policy_correction: truncated_is`, tokens are also weighted by
  min(π_prox/μ, cap) against the generation-time log-probabilities μ (AReaL's decoupled objective).
- `weights()` is what weight sync sends; `save`/`restore` hold model, optimizer, RNG and version.

PPO-clip is a pure loss in `platform.losses.ppo`; it needs a value model, which this learner does not hold, so
`policy_loss: ppo` is refused here with a clear error.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from raygent.platform.contracts import Trajectory
from raygent.platform.losses import adversarial_imitation_loss, grpo_loss, sft_loss
from raygent.platform.losses.advantages import group_advantages, group_index_from_ids, nonzero_variance_mask
from raygent.platform.losses.importance import truncated_importance_weights
from raygent.platform.losses.logprobs import token_logprobs
from raygent.platform.rl.batch import MicroBatch, Sample, collate, denominator, pack, samples_from_trajectories
from raygent.platform.rl.settings import LearnerSettings
from raygent.policies.loading import load_policy

OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.pt"


class Learner:
    """See the module docstring. `temperature` is the sampling temperature the engines use (logprobs match it)."""

    def __init__(self, model_path: str, settings: LearnerSettings, seed: int = 0, temperature: float = 1.0) -> None:
        if settings.loss.policy_loss != "grpo":
            raise ValueError("learner: policy_loss 'ppo' needs a value model; this learner trains GRPO")
        torch.manual_seed(seed)
        if settings.threads:
            torch.set_num_threads(settings.threads)
        self.settings = settings
        self.temperature = temperature
        self.model_path = model_path
        self.model, self.tokenizer = load_policy(model_path, dtype="float32", device=settings.device)
        self.model.train()
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.reference = None
        if settings.loss.needs_reference_model:
            self.reference, _ = load_policy(model_path, dtype="float32", device=settings.device)
            self.reference.requires_grad_(False)
        self.optimizer = self._make_optimizer(settings.lr)
        self.version = 0
        self._proximal: list[Tensor] = []
        self.wrapped: torch.nn.Module = self.model
        """The module forward passes go through (a DDP wrapper in `data_parallel`)."""

    def reset_optimizer(self, lr: float) -> None:
        """A fresh optimizer at `lr` (between stages: SFT's moments should not steer RL)."""
        self.optimizer = self._make_optimizer(lr)

    def _make_optimizer(self, lr: float) -> torch.optim.Optimizer:
        return torch.optim.AdamW(
            self.model.parameters(), lr=lr, weight_decay=self.settings.weight_decay, eps=self.settings.adam_eps
        )

    # -- updates ----------------------------------------------------------------------------------------------

    def sft(self, samples: Sequence[Sample], total: float | None = None) -> dict[str, float]:
        """One optimizer step of token-mean cross-entropy over the samples' responses.

        `total` overrides the token count the loss is divided by: a data-parallel shard passes the whole batch's
        count divided by the number of workers whose gradients DDP averages (see `aggregation.aggregate`).
        """
        total = total or denominator(samples, "token-mean")
        stats: dict[str, float] = defaultdict(float)
        self.optimizer.zero_grad(set_to_none=True)
        for group in pack(samples, self.settings.micro_batch_tokens):
            batch = collate(group, self.pad_id)
            logits = self._response_logits(self.wrapped, batch)
            result = sft_loss(logits, batch.response_ids, batch.loss_mask, denominator=total)
            result.loss.backward()
            _accumulate(stats, "sft", result.stats, weight=float(batch.loss_mask.sum()) / total)
        stats.update(self._step())
        return dict(stats)

    def grpo(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        """`updates_per_batch` optimizer steps of GRPO on `trajectories` (see the module docstring)."""
        loss_config = self.settings.loss
        trained = [t for t in trajectories if not t.infra_failure]
        stats: dict[str, float] = defaultdict(float)
        if not trained:
            return {"learner/skipped": 1.0}
        rewards = torch.tensor([t.total_reward for t in trained], dtype=torch.float32)
        groups = group_index_from_ids([t.group_id for t in trained])
        advantages = group_advantages(
            rewards, groups, normalize_std=loss_config.normalize_std, eps=loss_config.advantage_eps
        )
        keep = torch.ones(len(trained), dtype=torch.bool)
        if loss_config.filter_zero_variance_groups:
            keep = nonzero_variance_mask(rewards, groups, atol=loss_config.zero_variance_atol)
        if loss_config.mask_truncated:
            keep &= torch.tensor([not t.truncated for t in trained])
        stats["learner/kept_fraction"] = float(keep.float().mean())
        kept = [t for t, k in zip(trained, keep.tolist(), strict=True) if k]
        kept_advantages = [float(a) for a, k in zip(advantages, keep.tolist(), strict=True) if k]
        samples = samples_from_trajectories(kept, kept_advantages)
        if not samples:
            stats["learner/skipped"] = 1.0
            return dict(stats)
        stats.update(self.policy_update(samples))
        stats["learner/advantage_abs_mean"] = float(advantages.abs().mean())
        return dict(stats)

    def policy_update(
        self, samples: Sequence[Sample], total: float | None = None, failure_total: float | None = None
    ) -> dict[str, float]:
        """`updates_per_batch` optimizer steps of the GRPO loss on samples that carry their advantages.

        `total` and `failure_total` override the loss denominators (data-parallel shards; see `sft`).
        """
        stats: dict[str, float] = {}
        for update in range(self.settings.updates_per_batch):
            stats.update(self._grpo_update(samples, update == 0, total, failure_total))
        return stats

    def _grpo_update(
        self, samples: Sequence[Sample], first: bool, total: float | None, failure_total: float | None
    ) -> dict[str, float]:
        loss_config = self.settings.loss
        total = total or denominator(samples, loss_config.aggregation)
        failures = [s for s in samples if s.failure]
        failure_total = failure_total or (denominator(failures, loss_config.aggregation) if failures else 1.0)
        stats: dict[str, float] = defaultdict(float)
        self.optimizer.zero_grad(set_to_none=True)
        groups = pack(samples, self.settings.micro_batch_tokens)
        # The proximal policy is the learner at the start of the update. With one update per batch and no
        # importance weights it is the current forward pass, detached, so no extra no-grad pass is needed.
        reuse = self.settings.updates_per_batch == 1 and loss_config.off_policy_correction == "none"
        if first and not reuse:
            self._proximal = [self._logprobs(collate(g, self.pad_id), grad=False) for g in groups]
        for index, group in enumerate(groups):
            batch = collate(group, self.pad_id)
            logprobs = self._logprobs(batch, grad=True)
            proximal = logprobs.detach() if reuse else self._proximal[index]
            mask = batch.loss_mask
            ref = self._reference_logprobs(batch) if self.reference is not None else None
            weights = None
            if loss_config.off_policy_correction == "truncated_is":
                weights = truncated_importance_weights(proximal, batch.behaviour, loss_config.importance_weight_cap)
            result = grpo_loss(
                logprobs,
                proximal,
                batch.advantages,
                mask,
                ref_logprobs=ref,
                importance_weights=weights,
                denominator=total,
                **loss_config.loss_kwargs("grpo"),
            )
            loss = result.loss
            share = float(batch.size if loss_config.aggregation != "token-mean" else mask.sum()) / total
            _accumulate(stats, "grpo", result.stats, weight=share)
            if loss_config.adversarial_imitation_coef > 0 and bool(batch.failure.any()) and ref is not None:
                failure_mask = mask * batch.failure.unsqueeze(-1).float()
                imitation = adversarial_imitation_loss(
                    logprobs,
                    ref,
                    failure_mask,
                    denominator=failure_total,
                    **loss_config.loss_kwargs("adversarial_imitation"),
                )
                loss = loss + imitation.loss
                _accumulate(stats, "adversarial_imitation", imitation.stats, weight=1.0)
            loss.backward()
        stats.update(self._step())
        return dict(stats)

    # -- forward passes ---------------------------------------------------------------------------------------

    def _response_logits(self, model: torch.nn.Module, batch: MicroBatch) -> Tensor:
        """Logits scoring each response token: `[B, T, V]`."""
        device = self.settings.device
        logits = model(input_ids=batch.input_ids.to(device), attention_mask=batch.attention_mask.to(device)).logits
        index = batch.positions.to(device).unsqueeze(-1).expand(-1, -1, logits.shape[-1])
        return logits.gather(1, index).cpu() if device != "cpu" else logits.gather(1, index)

    def _logprobs(self, batch: MicroBatch, grad: bool) -> Tensor:
        with torch.set_grad_enabled(grad):
            logits = self._response_logits(self.wrapped, batch)
            return token_logprobs(logits, batch.response_ids, self.temperature)

    def _reference_logprobs(self, batch: MicroBatch) -> Tensor:
        assert self.reference is not None
        with torch.no_grad():
            return token_logprobs(self._response_logits(self.reference, batch), batch.response_ids, self.temperature)

    def _step(self) -> dict[str, float]:
        stats = {}
        if self.settings.grad_clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.grad_clip)
            stats["learner/grad_norm"] = float(norm)
        self.optimizer.step()
        self.version += 1
        return stats

    # -- weights and state ------------------------------------------------------------------------------------

    def weights(self) -> dict[str, Tensor]:
        """The model's parameters on CPU, named as in its `state_dict` (what the engines load)."""
        return {name: tensor.detach().to("cpu", copy=True) for name, tensor in self.model.state_dict().items()}

    def weight_spec(self) -> list[tuple[str, tuple[int, ...], str]]:
        """(name, shape, dtype) of every tensor `broadcast_weights` sends, in order."""
        return [(n, tuple(t.shape), str(t.dtype).removeprefix("torch.")) for n, t in self.model.state_dict().items()]

    def broadcast_weights(self, group_name: str, device: str = "cpu") -> None:
        """Sends every tensor of `weight_spec` from this rank (0) of a `ray.util.collective` group."""
        from ray.util import collective

        for tensor in self.model.state_dict().values():
            collective.broadcast(tensor.detach().to(device).contiguous(), src_rank=0, group_name=group_name)

    def get_version(self) -> int:
        return self.version

    def evaluate_logprobs(self, samples: Sequence[Sample]) -> list[list[float]]:
        """Teacher-forced log-probabilities of each sample's response (for checks and importance weights)."""
        out: list[list[float]] = []
        for s in samples:
            batch = collate([s], self.pad_id)
            out.append(self._logprobs(batch, grad=False)[0, : len(s.response_ids)].tolist())
        return out

    def save(self, directory: str) -> str:
        """Model + tokenizer (a loadable checkpoint), optimizer, RNG states and version into `directory`."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(path))
        self.tokenizer.save_pretrained(str(path))
        torch.save({"optimizer": self.optimizer.state_dict(), "version": self.version}, path / OPTIMIZER_FILE)
        torch.save(
            {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()},
            path / RNG_FILE,
        )
        return str(path)

    def restore(self, directory: str) -> int:
        """Loads what `save` wrote (the model weights from its safetensors); returns the version."""
        path = Path(directory)
        model, _ = load_policy(path, dtype="float32", device=self.settings.device)
        self.model.load_state_dict(model.state_dict())
        state = torch.load(path / OPTIMIZER_FILE, weights_only=False)
        self.optimizer.load_state_dict(state["optimizer"])
        self.version = int(state["version"])
        rng = torch.load(path / RNG_FILE, weights_only=False)
        torch.set_rng_state(rng["torch"])
        np.random.set_state(rng["numpy"])
        random.setstate(rng["python"])
        return self.version


def _accumulate(stats: dict[str, float], prefix: str, values: dict[str, Tensor], weight: float) -> None:
    for key, value in values.items():
        name = f"learner/{prefix}/{key}"
        stats[name] += float(value) * (weight if key != "tokens" else 1.0)


def learner_info(learner: Learner) -> dict[str, Any]:
    """What a run's metadata records about the learner."""
    return {"parameters": sum(p.numel() for p in learner.model.parameters()), "version": learner.version}
