"""`LearnerGroup`: the learner as `learner.num_workers` Ray actors that the trainer drives as one.

The driver prepares a batch once (advantages are group statistics, so they are computed before sharding) and
the group splits it: rank r trains on every world-th sample, with each loss term's whole-batch denominator
divided by the world size, so averaging the ranks' gradients gives exactly one learner's update on the whole
batch. Rank 0 is the one weight sync reads and the one that saves checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ray

from raygent.platform.rl.batch import Sample, denominator
from raygent.platform.rl.learner import Learner, term_denominators
from raygent.platform.rl.settings import LearnerSettings


class LearnerGroup:
    """Starts the learner actors; every method blocks until all ranks are done and returns rank 0's answer."""

    def __init__(self, model_path: str, settings: LearnerSettings, seed: int = 0, temperature: float = 1.0) -> None:
        self.settings = settings
        self.terms = settings.loss.built_terms()
        actor = ray.remote(Learner).options(num_cpus=settings.num_cpus, max_restarts=0)
        self.actors = [actor.remote(model_path, settings, seed, temperature)]
        ray.get([a.get_version.remote() for a in self.actors])

    @property
    def world_size(self) -> int:
        return len(self.actors)

    @property
    def rank0(self) -> Any:
        """The actor that holds the full weights for weight sync (`weights`, `weight_spec`, `broadcast_weights`)."""
        return self.actors[0]

    def _shards(self, samples: Sequence[Sample]) -> list[list[Sample]]:
        return [list(samples[rank :: self.world_size]) for rank in range(self.world_size)]

    def sft(self, samples: Sequence[Sample]) -> dict[str, float]:
        """One SFT optimizer step on the whole batch."""
        total = denominator(samples, "token-mean") / self.world_size
        refs = [a.sft.remote(shard, total) for a, shard in zip(self.actors, self._shards(samples), strict=True)]
        return dict(ray.get(refs)[0])

    def policy_update(self, samples: Sequence[Sample]) -> dict[str, float]:
        """`updates_per_batch` steps of the summed loss terms on samples that carry their advantages."""
        if not samples:
            return {"learner/skipped": 1.0}
        counts = term_denominators(samples, self.terms, self.settings.loss.aggregation)
        scaled = {name: count / self.world_size for name, count in counts.items()}
        shards = self._shards(samples)
        refs = [a.policy_update.remote(shard, scaled) for a, shard in zip(self.actors, shards, strict=True)]
        return dict(ray.get(refs)[0])

    def reset_optimizer(self, lr: float) -> None:
        ray.get([a.reset_optimizer.remote(lr) for a in self.actors])

    def save(self, directory: str) -> str:
        return str(ray.get(self.rank0.save.remote(directory)))

    def restore(self, directory: str) -> int:
        return int(ray.get([a.restore.remote(directory) for a in self.actors])[0])

    def get_version(self) -> int:
        return int(ray.get(self.rank0.get_version.remote()))

    def evaluate_logprobs(self, samples: Sequence[Sample]) -> list[list[float]]:
        return list(ray.get(self.rank0.evaluate_logprobs.remote(list(samples))))

    def shutdown(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
