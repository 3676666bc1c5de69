"""`LearnerGroup`: the learner as `learner.num_workers` Ray actors that the trainer drives as one.

The driver prepares a batch once (advantages are group statistics, so they are computed before sharding) and
the group splits it: rank r trains on every world-th sample, with each loss term's whole-batch denominator
divided by the world size, so averaging the ranks' gradients gives exactly one learner's update on the whole
batch. Rank 0 is the one weight sync reads and the one that writes checkpoints.

With more than one worker the actors are `LearnerWorker`s: one `torch.distributed` process group for the whole
run (gloo on CPU, NCCL on GPU; rank 0 finds its address and a free port, the others connect to it), not a new
trainer per update.

- `strategy: ddp` (default): each rank holds the model in `DistributedDataParallel`. Micro-batch backwards
  accumulate locally (`no_sync`) and one synchronised zero-loss backward per optimizer step all-reduces the
  accumulated gradients (`distributed.reduce_gradients`), so ranks may run different numbers of micro-batches,
  or none.
- `strategy: fsdp`: `fully_shard` on each transformer block and the root (and on the frozen reference model):
  parameters, gradients and AdamW state are sharded. Every forward is a collective (an all-gather), so the ranks
  run the same number of micro-batches (padded with an empty-response sample that adds nothing to the loss) and
  every call that runs the model goes to all ranks. After each update the ranks gather the full state dict on
  rank 0's CPU (`Learner.gathered`), which weight sync and `save` read.
- An empty shard (fewer samples than workers) still takes part in every collective: its rank trains on one
  empty-response sample (zero loss, zero gradient) and steps with the group's averaged gradients.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ray
import torch

from raygent.platform.rl import distributed
from raygent.platform.rl.batch import Sample, denominator
from raygent.platform.rl.learner import Learner, term_denominators
from raygent.platform.rl.settings import LearnerSettings


class LearnerWorker(Learner):
    """One rank of a learner group. Built in two steps so that rank 0 can publish its address first:
    `LearnerWorker(rank, world_size)`, then `setup(address, port, ...)` on every rank at once."""

    def __init__(self, rank: int, world_size: int) -> None:  # the Learner is built by `setup`
        self.rank = rank
        self.world_size = world_size

    def rendezvous(self) -> tuple[str, int]:
        """This node's address and a free port (called on rank 0)."""
        return distributed.rendezvous_address()

    def setup(
        self, address: str, port: int, model_path: str, settings: LearnerSettings, seed: int, temperature: float
    ) -> int:
        """Joins the process group, builds the learner and wraps it for `settings.strategy`; returns the version."""
        distributed.init_process_group(self.rank, self.world_size, address, port, settings.device)
        super().__init__(model_path, settings, seed, temperature)
        if settings.strategy == "fsdp":
            distributed.shard_fsdp(self.model)
            if self.reference is not None:
                distributed.shard_fsdp(self.reference)
            self.optimizer = self._make_optimizer(settings.lr)  # over the sharded parameters
            self.gather_weights()
        else:
            self.wrapped = distributed.wrap_ddp(self.model, settings.device)
        return self.version

    # -- the update's collectives -----------------------------------------------------------------------------

    def _pad_sample(self) -> Sample:
        """A sample that adds nothing to any loss (no response token) yet is covered by every built-in term, so
        its forward and backward take part in the collectives like a real micro-batch."""
        return Sample(prompt_ids=(self.pad_id,), response_ids=(), advantage=1.0, failure=True)

    def _micro_batches(self, samples: Sequence[Sample]) -> list[list[Sample]]:
        groups = super()._micro_batches(samples)
        if self.settings.strategy == "fsdp":
            count = torch.tensor([len(groups)], dtype=torch.long, device=self.settings.device)
            torch.distributed.all_reduce(count, op=torch.distributed.ReduceOp.MAX)
            groups += [[self._pad_sample()] for _ in range(int(count.item()) - len(groups))]
        return groups

    def policy_update(
        self, samples: Sequence[Sample], denominators: Mapping[str, float] | None = None
    ) -> dict[str, float]:
        if not samples:  # an empty shard still steps with the group (and joins its collectives)
            samples = [self._pad_sample()]
        return super().policy_update(samples, denominators)

    def _step(self) -> dict[str, float]:
        if self.settings.strategy == "ddp":
            distributed.reduce_gradients(self.wrapped, self.pad_id, self.settings.device)
        return super()._step()

    def gather_weights(self) -> None:
        """FSDP: the full state dict onto rank 0's CPU (`gathered`; a collective, all ranks call it)."""
        if self.settings.strategy == "fsdp":
            state = distributed.full_model_state(self.model)
            self.gathered = state if self.rank == 0 else None


class LearnerGroup:
    """Starts the learner actors; every method blocks until all ranks are done and returns rank 0's answer."""

    def __init__(self, model_path: str, settings: LearnerSettings, seed: int = 0, temperature: float = 1.0) -> None:
        self.settings = settings
        self.terms = settings.loss.built_terms()
        gpus = 1 if settings.device.startswith("cuda") else 0
        world = settings.num_workers
        if world == 1:
            actor = ray.remote(Learner).options(num_cpus=settings.num_cpus, num_gpus=gpus, max_restarts=0)
            self.actors = [actor.remote(model_path, settings, seed, temperature)]
            ray.get([a.get_version.remote() for a in self.actors])
            return
        worker = ray.remote(LearnerWorker).options(num_cpus=settings.num_cpus, num_gpus=gpus, max_restarts=0)
        self.actors = [worker.remote(rank, world) for rank in range(world)]
        address, port = ray.get(self.actors[0].rendezvous.remote())
        ray.get([a.setup.remote(address, port, model_path, settings, seed, temperature) for a in self.actors])

    @property
    def world_size(self) -> int:
        return len(self.actors)

    @property
    def sharded(self) -> bool:
        """FSDP over more than one rank: every call that runs the model goes to all ranks."""
        return self.world_size > 1 and self.settings.strategy == "fsdp"

    @property
    def rank0(self) -> Any:
        """The actor weight sync reads (`sync_state`: the full weights, or with LoRA the adapters alone, through
        `shared_weights`, `weight_spec` and `broadcast_weights`)."""
        return self.actors[0]

    def _shards(self, samples: Sequence[Sample]) -> list[list[Sample]]:
        return [list(samples[rank :: self.world_size]) for rank in range(self.world_size)]

    def _after_update(self) -> None:
        if self.sharded:
            ray.get([a.gather_weights.remote() for a in self.actors])

    def sft(self, samples: Sequence[Sample]) -> dict[str, float]:
        """One SFT optimizer step on the whole batch."""
        total = denominator(samples, "token-mean") / self.world_size
        refs = [a.sft.remote(shard, total) for a, shard in zip(self.actors, self._shards(samples), strict=True)]
        stats = dict(ray.get(refs)[0])
        self._after_update()
        return stats

    def policy_update(self, samples: Sequence[Sample]) -> dict[str, float]:
        """`updates_per_batch` steps of the summed loss terms on samples that carry their advantages."""
        if not samples:
            return {"learner/skipped": 1.0}
        counts = term_denominators(samples, self.terms, self.settings.loss.aggregation)
        scaled = {name: count / self.world_size for name, count in counts.items()}
        shards = self._shards(samples)
        refs = [a.policy_update.remote(shard, scaled) for a, shard in zip(self.actors, shards, strict=True)]
        stats = dict(ray.get(refs)[0])
        self._after_update()
        return stats

    def reset_optimizer(self, lr: float, total_steps: int | None = None) -> None:
        ray.get([a.reset_optimizer.remote(lr, total_steps) for a in self.actors])

    def save(self, directory: str, model_only: bool = False) -> str:
        """Every rank takes part (FSDP gathers, each rank's RNG state); rank 0 writes."""
        return str(ray.get([a.save.remote(directory, model_only) for a in self.actors])[0])

    def set_reference(self, directory: str) -> bool:
        """Every rank's reference model becomes the model in `directory` (rank 0 reads it and broadcasts)."""
        return bool(ray.get([a.set_reference.remote(directory) for a in self.actors])[0])

    def restore(self, directory: str) -> int:
        """Every rank restores: rank 0 reads the checkpoint and broadcasts it."""
        version = int(ray.get([a.restore.remote(directory) for a in self.actors])[0])
        self._after_update()
        return version

    def get_version(self) -> int:
        return int(ray.get(self.rank0.get_version.remote()))

    def evaluate_logprobs(self, samples: Sequence[Sample]) -> list[list[float]]:
        """Rank 0's teacher-forced log-probabilities (under FSDP all ranks run the same passes)."""
        actors = self.actors if self.sharded else [self.rank0]
        return list(ray.get([a.evaluate_logprobs.remote(list(samples)) for a in actors])[0])

    def shutdown(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
