"""Every knob of the lrRNN-flows study, with laptop-scale defaults.

Cluster scale (``scale: paper``) is the same code with the sizes of the method notes set in config:
n_neurons 512-2048, n_trials 120+, fit_iters ~2000, flow_iters ~3000, n_sample_neurons 1000+, and for real
data ``case: recorded`` with ``data_path`` (an .npz of trials x neurons x time) and an explicit ``rank``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from raygent.platform.study import StudyParams


class LrrnnFlowsParams(StudyParams):
    """Parameters of one trial (see the module docstrings of `ground_truth`, `fit`, `flow`, `direct`)."""

    case: Literal["bistable", "multistable", "limit_cycle", "ring", "heavy_tailed", "recorded"] = "bistable"
    rank: int = Field(0, ge=0, description="base rank; 0 = the ground truth's rank (must be set for recorded)")
    rank_offset: int = Field(0, ge=-3, le=3, description="fitted rank = base rank + offset (0 = no recurrence)")
    entropy_weight: float = Field(
        1.0, ge=0.0, description="lambda: share of the residual budget redrawn max-ent (pipeline, in [0, 1]); "
        "weight of the entropy term against the dynamics penalty (direct)"
    )
    objective: Literal["pipeline", "direct"] = "pipeline"
    flow_coordinates: Literal["residual", "loadings"] = Field(
        "residual", description="flow over (m, n - g(m)) (unit-Jacobian shear) or over (m, n) as in the notes"
    )

    data_path: str | None = None
    zscore_recording: bool = True

    n_neurons: int = Field(384, ge=32)
    n_trials: int = Field(
        120, ge=2, description="trials per case; with 30 the ring's fitted drift (~4 degrees) is data-limited"
    )
    n_steps: int = Field(120, ge=20)
    dt: float = Field(0.1, gt=0.0)
    sigma_latent: float = Field(0.1, ge=0.0)
    sigma_private: float = Field(0.2, ge=0.0)
    sigma_obs: float = Field(0.1, ge=0.0)

    fit_init: Literal["warm", "random"] = "warm"
    warm_noise: float = Field(0.2, ge=0.0)
    fit_iters: int = Field(300, ge=1)
    fit_window: int = Field(15, ge=1)
    fit_batch: int = Field(32, ge=1)
    fit_lr: float = Field(0.02, gt=0.0)
    fidelity_steps: int = Field(60, ge=1)

    n_features: int = Field(32, ge=1)
    resample_copies: int = Field(
        32, ge=1, description="max-ent redraws per neuron the flow trains on; with few, the redraws' sample "
        "correlation with m (~1/sqrt(copies N)) is learned as structure and makes sampled rings drift"
    )
    flow_iters: int = Field(2000, ge=1)
    flow_batch: int = Field(256, ge=1)
    flow_lr: float = Field(3e-3, gt=0.0)
    flow_hidden: int = Field(64, ge=4)
    direct_iters: int = Field(300, ge=1)
    direct_batch: int = Field(256, ge=8)
    direct_penalty: float = Field(100.0, gt=0.0, description="weight of the moment-budget penalty (direct)")

    n_sample_neurons: int = Field(1000, ge=16)
    n_sample_nets: int = Field(3, ge=1)
    n_ring_neurons: int = Field(16000, ge=16, description="N' for ring drift (finite-N' disorder makes rings drift)")
    ring_null_draws: int = Field(
        8, ge=2, description="networks of N' neurons resampled from the ground truth (the fit for recordings) "
        "that give the drift noise floor the ring check is judged against"
    )

    @model_validator(mode="after")
    def _consistent(self) -> LrrnnFlowsParams:
        if self.objective == "pipeline" and self.entropy_weight > 1.0:
            raise ValueError("entropy_weight is a mixing share in [0, 1] when objective is 'pipeline'")
        if self.case == "recorded" and (self.data_path is None or self.rank == 0):
            raise ValueError("case 'recorded' needs data_path and an explicit rank >= 1")
        return self
