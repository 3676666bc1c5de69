"""What every loss returns, and the names of the statistics it reports (defined once, here).

The learner prefixes the stat keys with its own namespace (`learner/`) when it logs them.
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor

LOSS = "loss"
POLICY_LOSS = "policy_loss"
KL_LOSS = "kl_loss"
KL_REF = "kl_ref"
CLIP_FRACTION = "clip_fraction"
CLIP_FRACTION_LOW = "clip_fraction_low"
CLIP_FRACTION_HIGH = "clip_fraction_high"
APPROX_KL = "approx_kl"
RATIO_MEAN = "ratio_mean"
IMPORTANCE_WEIGHT_MEAN = "importance_weight_mean"
ENTROPY = "entropy"
NLL = "nll"
TOKEN_ACCURACY = "token_accuracy"
LOG_RATIO_REF = "log_ratio_ref"
TOKENS = "tokens"


class LossResult(NamedTuple):
    """`loss`: the scalar to call `backward()` on. `stats`: detached scalars for logging, keyed by the names above."""

    loss: Tensor
    stats: dict[str, Tensor]
