"""Matrix-level experiment: one synthetic layer, its calibration activations, and each init's weighted error.

The setup of the method notes' calibration (docs/studies.md): Gaussian weights with a small fraction of large outliers
(the heavy tails that make Min-Max waste its range), and activations whose channels have log-normal scales (so
the diagonal Hessian weights h_i = mean x_i² span orders of magnitude, as in LLM activations).
"""

from __future__ import annotations

import torch
from torch import Tensor

from raygent.jobs.neuqi.quantize import (
    INITS,
    ScaleSearch,
    fake_quantize,
    hessian_diag,
    init_params,
    to_groups,
    weighted_error,
)


def synthetic_layer(
    seed: int,
    rows: int = 64,
    cols: int = 256,
    outlier_frac: float = 0.01,
    outlier_scale: float = 8.0,
    act_log_sigma: float = 1.0,
    calib_tokens: int = 512,
) -> tuple[Tensor, Tensor]:
    """Weights W [rows, cols] with outliers and h = diag(XᵀX)/N [cols] from X [calib_tokens, cols]."""
    generator = torch.Generator().manual_seed(seed)
    weight = torch.randn(rows, cols, generator=generator) / cols**0.5
    outliers = torch.rand(rows, cols, generator=generator) < outlier_frac
    weight = torch.where(outliers, weight * outlier_scale, weight)
    channel_scale = torch.exp(act_log_sigma * torch.randn(cols, generator=generator))
    x = torch.randn(calib_tokens, cols, generator=generator) * channel_scale
    return weight, hessian_diag(x).float()


def init_errors(
    weight: Tensor, h: Tensor, bits: int, group_size: int = 0, search: ScaleSearch = ScaleSearch()
) -> dict[str, float]:
    """Relative weighted error Σ h (W - Ŵ)² / Σ h W² for each init, and for NeUQI's scale with round(z).

    Keys: the init names, and `neuqi_round_z` (NeUQI's s with round(z): isolates the float zero-point).
    """
    w_rows, h_rows = to_groups(weight, h, group_size)
    norm = float((h_rows * w_rows**2).sum())
    errors: dict[str, float] = {}
    for init in INITS:
        scale, zero = init_params(init, w_rows, h_rows, bits, search)
        errors[init] = float(weighted_error(w_rows, fake_quantize(w_rows, scale, zero, bits), h_rows).sum()) / norm
        if init == "neuqi":
            rounded = fake_quantize(w_rows, scale, torch.round(zero), bits)
            errors["neuqi_round_z"] = float(weighted_error(w_rows, rounded, h_rows).sum()) / norm
    return errors
