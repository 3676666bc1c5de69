"""From trajectories and demonstrations to padded token tensors for the learner.

A *sample* is one policy call: the prompt ids the engine saw followed by the response ids it sampled; the loss
runs over the response positions only (so environment and tool text, which lives in prompts, is never trained).
A multi-turn trajectory gives one sample per step, each carrying the trajectory's advantage (docs/design.md §3).

Micro-batches are packed by a padded-token budget after sorting by length, and every loss in a batch is reduced
with the *whole batch's* denominator (`Batch.denominator`), so accumulating micro-batch gradients gives exactly
the full batch's gradient whatever the packing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import torch
from torch import Tensor
from transformers import PreTrainedTokenizerBase

from raygent.platform.contracts import Task, Trajectory
from raygent.platform.losses.aggregation import Aggregation
from raygent.platform.losses.config import LossConfig
from raygent.policies.prompts import PromptFormat, Turn, encode_prompt


@dataclass(frozen=True)
class Sample:
    """One training sequence. `behaviour_logprobs` has one entry per response token (empty for SFT)."""

    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]
    behaviour_logprobs: tuple[float, ...] = ()
    advantage: float = 0.0
    truncated: bool = False
    failure: bool = False
    """A failure action, for adversarial imitation (the step a judge marked, or every step of a failed episode)."""
    version: int = 0

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.response_ids)


@dataclass
class MicroBatch:
    """Tensors of one forward pass. B sequences, L padded sequence length, T padded response length.

    input_ids `[B, L]`, attention_mask `[B, L]`, positions `[B, T]` (index into L of the logits that score
    response token t: prompt length − 1 + t), response_ids `[B, T]`, loss_mask `[B, T]` (float), behaviour
    `[B, T]`, advantages `[B]`, truncated `[B]` (bool), failure `[B]` (bool), versions `[B]`.
    """

    input_ids: Tensor
    attention_mask: Tensor
    positions: Tensor
    response_ids: Tensor
    loss_mask: Tensor
    behaviour: Tensor
    advantages: Tensor
    truncated: Tensor
    failure: Tensor
    versions: Tensor

    @property
    def size(self) -> int:
        return int(self.input_ids.shape[0])

    def to(self, device: str | torch.device) -> MicroBatch:
        """The batch with every tensor on `device` (the learner's: the loss runs where the logits are)."""
        return MicroBatch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})


def collate(samples: Sequence[Sample], pad_id: int) -> MicroBatch:
    """Right-padded tensors of `samples` (see `MicroBatch`)."""
    if not samples:
        raise ValueError("collate needs at least one sample")
    length = max(s.length for s in samples)
    width = max(max(len(s.response_ids) for s in samples), 1)
    b = len(samples)
    input_ids = torch.full((b, length), pad_id, dtype=torch.long)
    attention = torch.zeros((b, length), dtype=torch.long)
    positions = torch.zeros((b, width), dtype=torch.long)
    response = torch.zeros((b, width), dtype=torch.long)
    mask = torch.zeros((b, width))
    behaviour = torch.zeros((b, width))
    for row, s in enumerate(samples):
        ids = list(s.prompt_ids) + list(s.response_ids)
        n_prompt, n_resp = len(s.prompt_ids), len(s.response_ids)
        input_ids[row, : len(ids)] = torch.tensor(ids)
        attention[row, : len(ids)] = 1
        if n_resp:
            positions[row, :n_resp] = torch.arange(n_prompt - 1, n_prompt - 1 + n_resp)
            response[row, :n_resp] = torch.tensor(s.response_ids)
            mask[row, :n_resp] = 1.0
            if s.behaviour_logprobs:
                behaviour[row, :n_resp] = torch.tensor(s.behaviour_logprobs)
    return MicroBatch(
        input_ids=input_ids,
        attention_mask=attention,
        positions=positions,
        response_ids=response,
        loss_mask=mask,
        behaviour=behaviour,
        advantages=torch.tensor([s.advantage for s in samples], dtype=torch.float32),
        truncated=torch.tensor([s.truncated for s in samples], dtype=torch.bool),
        failure=torch.tensor([s.failure for s in samples], dtype=torch.bool),
        versions=torch.tensor([s.version for s in samples], dtype=torch.long),
    )


def pack(samples: Sequence[Sample], max_tokens: int) -> list[list[Sample]]:
    """Group samples into micro-batches whose padded size (count × longest) stays within `max_tokens`.

    Sorted by length, so sequences of similar length share a micro-batch; a sample longer than the budget
    gets a micro-batch of its own.
    """
    groups: list[list[Sample]] = []
    current: list[Sample] = []
    for s in sorted(samples, key=lambda s: s.length):
        if current and (len(current) + 1) * s.length > max_tokens:
            groups.append(current)
            current = []
        current.append(s)
    if current:
        groups.append(current)
    return groups


def denominator(samples: Sequence[Sample], aggregation: Aggregation) -> float:
    """The whole batch's reduction count: trained tokens (token-mean) or sequences with one (seq-mean)."""
    if aggregation == "token-mean":
        return float(max(sum(len(s.response_ids) for s in samples), 1))
    return float(max(sum(1 for s in samples if s.response_ids), 1))


def samples_from_trajectories(trajectories: Sequence[Trajectory], advantages: Sequence[float]) -> list[Sample]:
    """One sample per step, each with its trajectory's advantage. Infrastructure failures give none.

    A step is a failure action when a judge marked it (`Step.failure`) or, when no step of its trajectory was
    judged, when its trajectory failed.
    """
    samples = []
    for trajectory, advantage in zip(trajectories, advantages, strict=True):
        if trajectory.infra_failure:
            continue
        judged = any(step.failure is not None for step in trajectory.steps)
        for step in trajectory.steps:
            failure = bool(step.failure) if judged else trajectory.success is False
            samples.append(
                Sample(
                    prompt_ids=tuple(step.prompt_ids),
                    response_ids=tuple(step.response_ids),
                    behaviour_logprobs=tuple(step.logprobs),
                    advantage=float(advantage),
                    truncated=trajectory.truncated,
                    failure=failure,
                    version=step.policy_version,
                )
            )
    return samples


def varied_groups(trajectories: Sequence[Trajectory], atol: float) -> set[str]:
    """The group ids whose rewards vary by more than `atol` (infrastructure failures left out)."""
    rewards: dict[str, list[float]] = {}
    for t in trajectories:
        if not t.infra_failure:
            rewards.setdefault(t.group_id, []).append(t.reward)
    return {group for group, values in rewards.items() if max(values) - min(values) > atol}


def policy_samples(trajectories: Sequence[Trajectory], loss: LossConfig) -> tuple[list[Sample], dict[str, float]]:
    """The driver's half of an RL update: advantages from each trajectory's `reward` by the configured estimator
    (`loss.advantage`), the sample masks the config asks for (zero-variance groups, truncated responses), and one
    sample per kept step. Returns the samples and `learner/*` statistics. Infrastructure failures are left out."""
    from raygent.platform.losses.advantages import ADVANTAGE_ESTIMATORS, group_index_from_ids, nonzero_variance_mask

    trained = [t for t in trajectories if not t.infra_failure]
    if not trained:
        return [], {"learner/skipped": 1.0}
    rewards = torch.tensor([t.reward for t in trained], dtype=torch.float32)
    groups = group_index_from_ids([t.group_id for t in trained])
    advantages = ADVANTAGE_ESTIMATORS[loss.advantage](rewards, groups, eps=loss.advantage_eps)
    keep = torch.ones(len(trained), dtype=torch.bool)
    if loss.filter_zero_variance_groups:
        keep = nonzero_variance_mask(rewards, groups, atol=loss.zero_variance_atol)
    if loss.mask_truncated:
        keep &= torch.tensor([not t.truncated for t in trained])
    kept = [(t, float(a)) for t, a, k in zip(trained, advantages.tolist(), keep.tolist(), strict=True) if k]
    samples = samples_from_trajectories([t for t, _ in kept], [a for _, a in kept])
    stats = {
        "learner/kept_fraction": float(keep.float().mean()),
        "learner/advantage_abs_mean": float(advantages.abs().mean()),
    }
    if not samples:
        stats["learner/skipped"] = 1.0
    return samples, stats


def samples_from_demonstration(
    tokenizer: PreTrainedTokenizerBase, prompt_format: PromptFormat, task: Task, turns: Sequence[tuple[str, str]]
) -> list[Sample]:
    """SFT samples of one expert episode: for each (observation, action) turn, the prompt the rollout worker
    would build at that point and the action's tokens followed by EOS (so the policy learns to stop)."""
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("the tokenizer has no eos_token")
    samples: list[Sample] = []
    history: list[Turn] = []
    for observation, action in turns:
        prompt = encode_prompt(tokenizer, prompt_format.messages(task.instruction, observation, history))
        response = [int(t) for t in tokenizer.encode(action, add_special_tokens=False)] + [int(eos)]
        samples.append(Sample(prompt_ids=tuple(prompt), response_ids=tuple(response)))
        history.append(Turn(observation=observation, action=action))
    return samples
