"""Every knob of the clipped-ASGD study, with laptop-scale defaults (the YAML's `study:` block overrides)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from raygent.platform.study import StudyParams


class ClippedASGDParams(StudyParams):
    """One trial: `replicates` independent asynchronous runs of one (S, c, θ) cell from one seed block."""

    mode: Literal["simulate", "ray"] = "simulate"
    objective: Literal["ripple", "logistic"] = "ripple"
    dim: int = Field(20, ge=1)
    condition: float = Field(100.0, ge=1.0)
    ripple_amplitude: float = Field(0.02, ge=0.0)
    ripple_frequency: float = Field(2.0, gt=0.0)
    n_samples: int = Field(400, ge=2)
    l2: float = Field(0.01, ge=0.0)
    data_path: str | None = None
    init_distance: float = Field(5.0, ge=0.0)
    n_workers: int = Field(8, ge=1)
    n_slow: int = Field(2, ge=0)
    slowdown: float = Field(1.0, ge=1.0)
    step_size: float = Field(0.03, gt=0.0)
    clip: float = Field(0.2, gt=0.0, allow_inf_nan=True)
    theta: float = Field(0.5, gt=0.0)
    noise_scale: float = Field(0.01, ge=0.0)
    target: float = Field(1e-4, gt=0.0)
    max_updates: int = Field(3000, ge=1)
    replicates: int = Field(20, ge=1)
    checkpoint_every: int = Field(0, ge=0)
    base_time: float = Field(0.002, gt=0.0)
    timeout_s: float = Field(600.0, gt=0.0)

    @model_validator(mode="after")
    def _consistent(self) -> ClippedASGDParams:
        if self.n_slow > self.n_workers:
            raise ValueError(f"n_slow ({self.n_slow}) cannot exceed n_workers ({self.n_workers})")
        if math.isnan(self.clip):
            raise ValueError("clip must be a number > 0 or .inf (unclipped)")
        return self
