"""The learner: a causal LM, its optimizer and the loss terms of `platform.losses.terms`, as a plain torch object
that `learner_group.LearnerGroup` runs as one or more Ray actors.

- `sft(samples)`: one optimizer step of cross-entropy on demonstration responses.
- `policy_update(samples, denominators)`: `updates_per_batch` optimizer steps of the sum of the configured loss
  terms (`learner.loss.terms`: GRPO, KL, adversarial imitation, SFT, entropy, or a plugin's) on samples that
  carry their advantages (computed on the driver: `batch.policy_samples`). Each term is reduced with the whole
  batch's count of the samples it covers (`denominators`; a data-parallel shard receives the whole batch's counts
  divided by the world size). The ratio is taken against the learner's own log-probabilities at the start of the
  update (the "proximal" policy); with `off_policy_correction: truncated_is`, tokens are also weighted by
  min(π_prox/μ, cap) against the generation-time log-probabilities μ (AReaL's decoupled objective). A frozen
  reference model is loaded only when a term needs one.
- `sync_state()` is what weight sync sends (`shared_weights`, `weight_spec`, `broadcast_weights` read it);
  `weights()` is the plain model's full weights; `save`/`restore` hold model, optimizer, RNG and version.
- `learner.lora`: `peft` adapters on the model (only they train). Weight sync is adapter-only: `sync_state()` is
  the adapters' tensors (lora_A/lora_B of each target module, under this model's `state_dict` names), which the
  engines apply over the base they hold (`policies.adapters`). `weights()` and the checkpoint's model files carry
  the merged weights under the plain model's names (a loadable model); the adapters go in `lora_adapter.pt`.
  Without LoRA (full fine-tuning) `sync_state()` is the full weights, as before.

In a learner group (`learner_group.LearnerWorker`, a subclass) `wrapped` is the DDP module or the model is sharded
by FSDP; `save` and `restore` are then collectives: rank 0 writes and reads the files, the others take part.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from raygent.platform.losses import sft_loss
from raygent.platform.losses.aggregation import Aggregation
from raygent.platform.losses.importance import truncated_importance_weights
from raygent.platform.losses.logprobs import token_logprobs
from raygent.platform.losses.terms import LossTerm, TermInputs
from raygent.platform.rl import distributed
from raygent.platform.rl.batch import MicroBatch, Sample, collate, denominator, pack
from raygent.platform.rl.schedule import LRSchedule
from raygent.platform.rl.settings import LearnerSettings
from raygent.policies.loading import load_policy

OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.pt"
ADAPTER_FILE = "lora_adapter.pt"
"""With `learner.lora`: the adapters' tensors (the model files next to it hold the merged weights)."""


class Learner:
    """See the module docstring. `temperature` is the sampling temperature the engines use (logprobs match it)."""

    def __init__(self, model_path: str, settings: LearnerSettings, seed: int = 0, temperature: float = 1.0) -> None:
        torch.manual_seed(seed)
        if settings.threads:
            torch.set_num_threads(settings.threads)
        self.settings = settings
        self.temperature = temperature
        self.model_path = model_path
        self.model, self.tokenizer = load_policy(model_path, dtype="float32", device=settings.device)
        self.model.train()
        self.lora_scaling = distributed.apply_lora(self.model, settings.lora) if settings.lora is not None else {}
        """Each LoRA-adapted module's alpha / rank, by name (empty without LoRA)."""
        self.gathered: dict[str, Tensor] | None = None
        """The full state dict a sharded (FSDP) learner gathered on rank 0 after its last update."""
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.terms = settings.loss.built_terms()
        self.reference = None
        if any(term.needs_reference for term in self.terms):
            self.reference, _ = load_policy(model_path, dtype="float32", device=settings.device)
            self.reference.requires_grad_(False)
        self.optimizer = self._make_optimizer(settings.lr)
        self.schedule = LRSchedule(settings.lr, settings.schedule)
        self.version = 0
        self._proximal: list[Tensor] = []
        self.wrapped: torch.nn.Module = self.model
        """The module forward passes go through (the DDP wrapper in a `learner_group.LearnerWorker`)."""

    def reset_optimizer(self, lr: float, total_steps: int | None = None) -> None:
        """A fresh optimizer at `lr` (between stages: SFT's moments should not steer RL), its schedule
        (`learner.schedule`) starting again over the stage's `total_steps` optimizer steps."""
        self.optimizer = self._make_optimizer(lr)
        self.schedule = LRSchedule(lr, self.settings.schedule, total_steps)

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
        for group in self._micro_batches(samples):
            batch = self._collate(group)
            logits = self._response_logits(self.wrapped, batch)
            result = sft_loss(logits, batch.response_ids, batch.loss_mask, denominator=total)
            result.loss.backward()
            _accumulate(stats, "sft", result.stats, weight=float(batch.loss_mask.sum()) / total)
        stats.update(self._step())
        return dict(stats)

    def policy_update(
        self, samples: Sequence[Sample], denominators: Mapping[str, float] | None = None
    ) -> dict[str, float]:
        """`updates_per_batch` optimizer steps of the summed loss terms on samples that carry their advantages.

        `denominators` (term name → count) override each term's reduction count (data-parallel shards; see `sft`);
        by default they are this batch's own (`term_denominators`).
        """
        if not samples:
            return {"learner/skipped": 1.0}
        counts = dict(denominators or term_denominators(samples, self.terms, self.settings.loss.aggregation))
        stats: dict[str, float] = {}
        for update in range(self.settings.updates_per_batch):
            stats.update(self._policy_step(samples, update == 0, counts))
        return stats

    def _policy_step(self, samples: Sequence[Sample], first: bool, counts: Mapping[str, float]) -> dict[str, float]:
        loss_config = self.settings.loss
        stats: dict[str, float] = defaultdict(float)
        self.optimizer.zero_grad(set_to_none=True)
        groups = self._micro_batches(samples)
        # The proximal policy is the learner at the start of the update. With one update per batch and no
        # importance weights it is the current forward pass, detached, so no extra no-grad pass is needed.
        reuse = self.settings.updates_per_batch == 1 and loss_config.off_policy_correction == "none"
        if first and not reuse:
            self._proximal = [self._logprobs(self._collate(g), grad=False) for g in groups]
        for index, group in enumerate(groups):
            batch = self._collate(group)
            logits = self._response_logits(self.wrapped, batch)
            logprobs = token_logprobs(logits, batch.response_ids, self.temperature)
            proximal = logprobs.detach() if reuse else self._proximal[index]
            weights = None
            if loss_config.off_policy_correction == "truncated_is":
                weights = truncated_importance_weights(proximal, batch.behaviour, loss_config.importance_weight_cap)
            inputs = TermInputs(
                logprobs=logprobs,
                proximal=proximal,
                logits=logits,
                response_ids=batch.response_ids,
                loss_mask=batch.loss_mask,
                advantages=batch.advantages,
                failure=batch.failure,
                aggregation=loss_config.aggregation,
                ref_logprobs=self._reference_logprobs(batch) if self.reference is not None else None,
                importance_weights=weights,
            )
            loss = (logprobs * 0.0).sum()  # a graph even when no term covers this micro-batch
            for term in self.terms:
                covered = term.covers(batch.advantages, batch.failure)
                if not bool(covered.any()):
                    continue
                mask = batch.loss_mask * covered.unsqueeze(-1).to(batch.loss_mask.dtype)
                result = term.loss(inputs, mask, counts[term.name])
                loss = loss + result.loss
                share = _share(mask, covered, loss_config.aggregation, counts[term.name])
                _accumulate(stats, term.name, result.stats, weight=share)
            loss.backward()
        stats.update(self._step())
        return dict(stats)

    def _micro_batches(self, samples: Sequence[Sample]) -> list[list[Sample]]:
        """The micro-batches of one optimizer step (a sharded learner pads them to the same count on every rank)."""
        return pack(samples, self.settings.micro_batch_tokens)

    # -- forward passes ---------------------------------------------------------------------------------------

    def _collate(self, samples: Sequence[Sample]) -> MicroBatch:
        """A micro-batch on the learner's device: the forward pass, the loss terms and the backward all run there."""
        return collate(samples, self.pad_id).to(self.settings.device)

    def _response_logits(self, model: torch.nn.Module, batch: MicroBatch) -> Tensor:
        """Logits scoring each response token: `[B, T, V]`, from one forward pass over the shared-prefix rows.

        The LM head runs only at the positions some row's response is scored from (`logits_to_keep`, the union over
        the micro-batch's rows): with a real vocabulary (49 k for SmolLM2) the head over every prefix position would
        cost more than the transformer."""
        positions = batch.positions
        device = positions.device
        scored = positions[batch.loss_mask > 0]
        keep = torch.unique(scored) if scored.numel() else positions[:1, :1].flatten()
        lookup = torch.zeros(batch.input_ids.shape[1], dtype=torch.long, device=device)
        lookup[keep] = torch.arange(len(keep), device=device)
        mask = batch.attention_mask
        if getattr(self.model.config, "_attn_implementation", "sdpa") == "eager":  # eager adds the mask to scores
            mask = torch.zeros(mask.shape, device=device).masked_fill(~mask, torch.finfo(torch.float32).min)
        inputs = {"input_ids": batch.input_ids, "attention_mask": mask, "position_ids": batch.position_ids}
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=self.settings.autocast == "bf16"):
            logits = model(**inputs, logits_to_keep=keep).logits.float()
        return logits[batch.rows.unsqueeze(1).expand_as(positions), lookup[positions]]

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
        lr = self.schedule.next_lr()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        stats["learner/lr"] = lr
        self.optimizer.step()
        self.version += 1
        return stats

    # -- weights and state ------------------------------------------------------------------------------------

    def plain_state(self) -> dict[str, Tensor]:
        """The plain model's state dict (what the engines load): LoRA merged (W + scaling·B·A, the plain names),
        and under FSDP the full weights rank 0 gathered after the last update."""
        state = self.gathered if self.gathered is not None else self.model.state_dict()
        return distributed.merged_state(state, self.lora_scaling)

    def sync_state(self) -> dict[str, Tensor]:
        """What weight sync sends the engines: with LoRA the adapters' tensors alone (the engines hold the base),
        otherwise the plain model's full weights (`plain_state`)."""
        if not self.lora_scaling:
            return self.plain_state()
        state = self.gathered if self.gathered is not None else self.model.state_dict()
        return distributed.adapter_state(state)

    def weights(self) -> dict[str, Tensor]:
        """The plain model's parameters on CPU, named as in its `state_dict` (LoRA merged): what a full-weight
        sync sends and an engine built without adapters loads."""
        return {name: tensor.detach().to("cpu", copy=True) for name, tensor in self.plain_state().items()}

    def sync_weights(self) -> dict[str, Tensor]:
        """`sync_state()` on CPU, copied (what `ObjectStoreSync` hands the engines, as plain tensors)."""
        return {name: tensor.detach().to("cpu", copy=True) for name, tensor in self.sync_state().items()}

    def shared_weights(self) -> dict[str, Any]:
        """`sync_state()` for `ObjectStoreSync`: float32 tensors as numpy views (Ray's object store hands a numpy
        array to a reader on the same node without copying it; a torch tensor it pickles), a tensor tied to an
        earlier one (SmolLM2's LM head is its embedding) once. Ray serializes the result when this call returns,
        before the next update runs on this actor."""
        out: dict[str, Any] = {}
        seen: set[tuple[int, tuple[int, ...]]] = set()
        for name, tensor in self.sync_state().items():
            data = tensor.detach()
            key = (data.data_ptr(), tuple(data.shape))
            if key in seen:
                continue
            seen.add(key)
            out[name] = data.numpy() if data.dtype == torch.float32 and data.device.type == "cpu" else data.cpu()
        return out

    def weight_spec(self) -> list[tuple[str, tuple[int, ...], str]]:
        """(name, shape, dtype) of every tensor `broadcast_weights` sends, in order (`sync_state`)."""
        return [(n, tuple(t.shape), str(t.dtype).removeprefix("torch.")) for n, t in self.sync_state().items()]

    def broadcast_weights(self, group_name: str, device: str = "cpu") -> None:
        """Sends every tensor of `weight_spec` from this rank (0) of a `ray.util.collective` group."""
        from ray.util import collective

        for tensor in self.sync_state().values():
            collective.broadcast(tensor.detach().to(device).contiguous(), src_rank=0, group_name=group_name)

    def get_version(self) -> int:
        return self.version

    def state_bytes(self) -> dict[str, int]:
        """Bytes this process holds of parameters, gradients, optimizer state and the reference model (a rank's
        shards under FSDP), for `bench/learner_group.py`."""

        def size(tensors: Any) -> int:
            local = [t.to_local() if hasattr(t, "to_local") else t for t in tensors]
            return int(sum(t.numel() * t.element_size() for t in local))

        params = list(self.model.parameters())
        return {
            "parameters": size(params),
            "gradients": size(p.grad for p in params if p.grad is not None),
            "optimizer": size(v for s in self.optimizer.state.values() for v in s.values() if isinstance(v, Tensor)),
            "reference": size(self.reference.parameters()) if self.reference is not None else 0,
        }

    def evaluate_logprobs(self, samples: Sequence[Sample]) -> list[list[float]]:
        """Teacher-forced log-probabilities of each sample's response (for checks and importance weights)."""
        out: list[list[float]] = []
        for s in samples:
            batch = self._collate([s])
            out.append(self._logprobs(batch, grad=False)[0, : len(s.response_ids)].tolist())
        return out

    def save(self, directory: str, model_only: bool = False) -> str:
        """Model + tokenizer (a loadable checkpoint: LoRA merged), optimizer, RNG states and version into
        `directory` (`model_only`: model + tokenizer). In a learner group every rank calls it (gathers are
        collectives) and rank 0 writes."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

        path = Path(directory)
        sharded = distributed.is_distributed() and self.settings.strategy == "fsdp"
        state = distributed.full_model_state(self.model) if sharded else self.model.state_dict()
        if model_only:
            if distributed.rank() == 0:
                path.mkdir(parents=True, exist_ok=True)
                self.model.save_pretrained(str(path), state_dict=distributed.merged_state(state, self.lora_scaling))
                self.tokenizer.save_pretrained(str(path))
            return str(path)
        options = StateDictOptions(full_state_dict=True, cpu_offload=distributed.is_distributed())
        optimizer = get_optimizer_state_dict(self.model, self.optimizer, options=options)
        rngs = distributed.gather_objects(
            {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
        )
        if distributed.rank() != 0:
            return str(path)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(path), state_dict=distributed.merged_state(state, self.lora_scaling))
        self.tokenizer.save_pretrained(str(path))
        if self.lora_scaling:
            torch.save(distributed.adapter_state(state), path / ADAPTER_FILE)
        torch.save(
            {"optimizer": optimizer, "version": self.version, "schedule": self.schedule.state()}, path / OPTIMIZER_FILE
        )
        torch.save({**rngs[0], "ranks": rngs}, path / RNG_FILE)
        return str(path)

    def set_reference(self, directory: str) -> bool:
        """The reference model of the loss terms that need one becomes the model saved in `directory` (rank 0
        reads it and broadcasts in a group); False when no term needs a reference."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        if self.reference is None:
            return False
        state: dict[str, Any] = {}
        if distributed.rank() == 0:
            model, _ = load_policy(Path(directory), dtype="float32", device=self.settings.device)
            state = model.state_dict()
        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=distributed.is_distributed())
        distributed.reshard(self.reference)
        set_model_state_dict(self.reference, state, options=options)
        self.reference.requires_grad_(False)
        return True

    def restore(self, directory: str) -> int:
        """Loads what `save` wrote; returns the version. The model comes from the checkpoint's weights (with LoRA:
        the adapters, on the base model this learner was built from). In a learner group every rank calls it:
        rank 0 reads the files and broadcasts (parameters, optimizer state), each rank gets its own RNG state."""
        from torch.distributed.checkpoint.state_dict import (
            StateDictOptions,
            set_model_state_dict,
            set_optimizer_state_dict,
        )

        path = Path(directory)
        group = distributed.is_distributed()
        reader = distributed.rank() == 0
        state: dict[str, Any] = {}
        saved: dict[str, Any] = {}
        if reader:
            if self.lora_scaling:
                state = torch.load(path / ADAPTER_FILE, weights_only=True)
            else:
                model, _ = load_policy(path, dtype="float32", device=self.settings.device)
                state = model.state_dict()
            saved = torch.load(path / OPTIMIZER_FILE, weights_only=False)
        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=group, strict=not self.lora_scaling)
        set_model_state_dict(self.model, state, options=options)
        optimizer_options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=group)
        set_optimizer_state_dict(self.model, self.optimizer, saved.get("optimizer", {}), options=optimizer_options)
        self.version = int(distributed.broadcast_object(saved.get("version", 0)))
        self.schedule.load_state(distributed.broadcast_object(saved.get("schedule", {})))
        rngs = distributed.broadcast_object(torch.load(path / RNG_FILE, weights_only=False) if reader else None)
        mine = rngs["ranks"][distributed.rank()] if len(rngs.get("ranks", ())) > distributed.rank() else rngs
        torch.set_rng_state(mine["torch"])
        np.random.set_state(mine["numpy"])
        random.setstate(mine["python"])
        return self.version


def term_denominators(
    samples: Sequence[Sample], terms: Sequence[LossTerm], aggregation: Aggregation
) -> dict[str, float]:
    """Each term's reduction count over the whole batch: the trained tokens (token-mean) or sequences (seq-mean)
    of the samples it covers. A data-parallel group computes these once and divides them by the world size."""
    advantages = torch.tensor([s.advantage for s in samples], dtype=torch.float32)
    failure = torch.tensor([s.failure for s in samples], dtype=torch.bool)
    counts = {}
    for term in terms:
        covered = term.covers(advantages, failure).tolist()
        counts[term.name] = denominator([s for s, c in zip(samples, covered, strict=True) if c], aggregation)
    return counts


def _share(mask: Tensor, covered: Tensor, aggregation: Aggregation, total: float) -> float:
    """This micro-batch's part of a term's denominator (so per-micro-batch stats add up to batch means)."""
    part = float(mask.sum()) if aggregation == "token-mean" else float(covered.sum())
    return part / total


def _accumulate(stats: dict[str, float], prefix: str, values: dict[str, Tensor], weight: float) -> None:
    for key, value in values.items():
        name = f"learner/{prefix}/{key}"
        stats[name] += float(value) * (weight if key != "tokens" else 1.0)


def learner_info(learner: Learner) -> dict[str, Any]:
    """What a run's metadata records about the learner."""
    return {"parameters": sum(p.numel() for p in learner.model.parameters()), "version": learner.version}
