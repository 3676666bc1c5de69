"""SEAgent's KL penalty: β · KL to the reference in the GRPO branch only.

    learner.loss.terms:
      - {name: grpo}
      - {name: "raygent.jobs.seagent.losses:GRPOBranchKL", coef: 0.04}    # β
      - {name: adversarial_imitation, coef: 0.2}                          # γ

SEAgent's objective is L_GRPO, which holds −β · KL_t (k3) to the frozen reference, plus L_AI; each micro-batch is
either positive (the GRPO branch) or negative (adversarial imitation of a first error step, whose own term
already measures the ratio to the reference and has no KL). The platform's `kl` term covers every sample; this
one covers the samples that are not failure steps. Without it, when the judge calls nothing done (every GRPO
advantage 0) adversarial imitation alone moves the policy: the laptop agent went from 6 % to 100 % invalid actions
in eight steps (docs/seagent.md).

How this differs from the paper: β = 0.04 is TRL's default (SEAgent trains with TRL-0.14-style GRPO; the notes
read from its code do not give β); the GRPO branch here is every step that is not a judged first error, so it
holds the zero-advantage steps of groups whose episodes were all judged alike, which SEAgent's step-level GRPO
does not sample.
"""

from __future__ import annotations

from torch import Tensor

from raygent.platform.losses.terms import KLTerm


class GRPOBranchKL(KLTerm):
    """The `kl` term (k3 by default) on every sample but the failure steps (see the module docstring)."""

    def covers(self, advantages: Tensor, failure: Tensor) -> Tensor:
        return ~failure.bool()
