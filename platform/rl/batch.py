"""From trajectories and demonstrations to padded token tensors for the learner.

A *sample* is one policy call: the prompt ids the engine saw followed by the response ids it sampled; the loss
runs over the response positions only (so environment and tool text, which lives in prompts, is never trained).
A multi-turn trajectory gives one sample per step, each carrying the trajectory's advantage (docs/design.md §3).

Samples that share a prompt (a GRPO group's completions, SFT samples of one state) share one row of a micro-batch:
the prompt is computed once, not once per sample (`MicroBatch`; the idea of "Prefix Grouper", Liu et al. 2025).
A 4 × 8 batch of 45-token prompts and 16-token completions is 688 tokens in this layout against 1,952 as separate
sequences. The logits are those of each sample alone (a token sees its row's prefix and its own segment, at its own
sequence's positions), asserted against separate forward passes in `tests/platform/test_rl_core.py`.

Micro-batches are packed by a padded-token budget after sorting by row length, and every loss in a batch is reduced
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
    """Tensors of one forward pass in the shared-prefix layout: B samples in R rows of length L; T is the padded
    response length.

    The samples with one prompt share a row. It holds the prompt once, all but its last token (the *prefix*), then
    one *segment* per sample: the prompt's last token and the response but its last token, the tokens whose logits
    score the response. A token attends to the prefix and to the earlier tokens of its own segment, at its position
    in its own sequence, so its logits are those of its sample alone.

    input_ids `[R, L]`, attention_mask `[R, 1, L, L]` (bool, True = attend), position_ids `[R, L]`, rows `[B]` (each
    sample's row), positions `[B, T]` (index into L of the logits that score response token t), response_ids
    `[B, T]`, loss_mask `[B, T]` (float), behaviour `[B, T]`, advantages `[B]`, truncated `[B]` (bool), failure
    `[B]` (bool), versions `[B]`.
    """

    input_ids: Tensor
    attention_mask: Tensor
    position_ids: Tensor
    rows: Tensor
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
        return int(self.rows.shape[0])

    def to(self, device: str | torch.device) -> MicroBatch:
        """The batch with every tensor on `device` (the learner's: the loss runs where the logits are)."""
        return MicroBatch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})


_PREFIX, _PADDING = -1, -2
"""Segment ids of a row's prefix and of its padding (a sample's segment id is its index)."""


def _row_length(samples: Sequence[Sample]) -> int:
    """Tokens of one row holding `samples` (one prompt): the prefix plus one segment per response token."""
    return max(max(len(samples[0].prompt_ids) - 1, 0) + sum(len(s.response_ids) for s in samples), 1)


def collate(samples: Sequence[Sample], pad_id: int) -> MicroBatch:
    """The shared-prefix tensors of `samples` (see `MicroBatch`); samples keep their order along B."""
    if not samples:
        raise ValueError("collate needs at least one sample")
    members: dict[tuple[int, ...], list[int]] = {}
    for index, s in enumerate(samples):
        if s.response_ids and not s.prompt_ids:
            raise ValueError(f"sample {index} has a response but no prompt: its first token has nothing to score it")
        members.setdefault(tuple(s.prompt_ids), []).append(index)
    b = len(samples)
    width = max(max(len(s.response_ids) for s in samples), 1)
    rows = torch.zeros(b, dtype=torch.long)
    positions = torch.zeros((b, width), dtype=torch.long)
    layout: list[tuple[list[int], list[int], list[int]]] = []  # per row: token ids, position ids, segment ids
    for row, (prompt, indices) in enumerate(members.items()):
        prefix = len(prompt) - 1
        ids, where, segment = list(prompt[:-1]), list(range(prefix)), [_PREFIX] * max(prefix, 0)
        for index in indices:
            rows[index] = row
            scored = samples[index].response_ids
            if scored:
                positions[index, : len(scored)] = torch.arange(len(ids), len(ids) + len(scored))
                ids += [prompt[-1], *scored[:-1]]
                where += range(prefix, prefix + len(scored))
                segment += [index] * len(scored)
        layout.append((ids, where, segment) if ids else ([pad_id], [0], [_PADDING]))
    length = max(len(ids) for ids, _, _ in layout)
    input_ids = torch.full((len(layout), length), pad_id, dtype=torch.long)
    position_ids = torch.zeros((len(layout), length), dtype=torch.long)
    segments = torch.full((len(layout), length), _PADDING, dtype=torch.long)
    for row, (ids, where, segment) in enumerate(layout):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        position_ids[row, : len(ids)] = torch.tensor(where)
        segments[row, : len(ids)] = torch.tensor(segment)
    causal = torch.ones((length, length), dtype=torch.bool).tril()
    same = segments.unsqueeze(2) == segments.unsqueeze(1)  # padding sees padding: no row of the mask is empty
    attention = causal & (same | (segments == _PREFIX).unsqueeze(1))
    response = torch.zeros((b, width), dtype=torch.long)
    mask = torch.zeros((b, width))
    behaviour = torch.zeros((b, width))
    for index, s in enumerate(samples):
        n = len(s.response_ids)
        if n:
            response[index, :n] = torch.tensor(s.response_ids)
            mask[index, :n] = 1.0
            if s.behaviour_logprobs:
                behaviour[index, :n] = torch.tensor(s.behaviour_logprobs)
    return MicroBatch(
        input_ids=input_ids,
        attention_mask=attention.unsqueeze(1),
        position_ids=position_ids,
        rows=rows,
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
    """Group samples into micro-batches whose padded size in the shared-prefix layout (rows × longest row) stays
    within `max_tokens`.

    The samples of one prompt fill one row while it fits the budget (then another row, which repeats the prefix);
    rows are sorted by length, so rows of similar length share a micro-batch; a row longer than the budget gets a
    micro-batch of its own. (`collate` joins the rows of one prompt that land in one micro-batch, so a prompt whose
    samples overflow a row may give a micro-batch up to twice the budget.)
    """
    members: dict[tuple[int, ...], list[Sample]] = {}
    for s in samples:
        members.setdefault(tuple(s.prompt_ids), []).append(s)
    rows: list[list[Sample]] = []
    for group in members.values():
        row: list[Sample] = []
        for s in group:
            if row and _row_length([*row, s]) > max_tokens:
                rows.append(row)
                row = []
            row.append(s)
        rows.append(row)
    batches: list[list[Sample]] = []
    current: list[list[Sample]] = []
    for row in sorted(rows, key=_row_length):
        if current and (len(current) + 1) * _row_length(row) > max_tokens:
            batches.append([s for r in current for s in r])
            current = []
        current.append(row)
    if current:
        batches.append([s for r in current for s in r])
    return batches


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
    from raygent.platform.losses.advantages import advantage_estimator, group_index_from_ids, nonzero_variance_mask

    trained = [t for t in trajectories if not t.infra_failure]
    if not trained:
        return [], {"learner/skipped": 1.0}
    rewards = torch.tensor([t.reward for t in trained], dtype=torch.float32)
    groups = group_index_from_ids([t.group_id for t in trained])
    advantages = advantage_estimator(loss.advantage)(rewards, groups, eps=loss.advantage_eps)
    if advantages.shape != rewards.shape:
        raise ValueError(
            f"advantage estimator {loss.advantage!r} returned shape {tuple(advantages.shape)} "
            f"for {len(trained)} rewards"
        )
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
