"""Uniform (affine) weight quantizers and their parameter initialisations: Min-Max, grid, NeUQI.

All functions are pure and act on the rows of a 2-D tensor: one row is one quantisation group (a whole
output channel when quantising per channel, or `group_size` consecutive weights of it; see `to_groups`).
Every row gets its own scale `s` and zero-point `z` (shape [R, 1]); with `Q = 2**bits - 1` a weight `w`
is stored as `q = clamp(round(w / s + z), 0, Q)` and read back as `s * (q - z)`.

The three initialisations compared by the study:

- `minmax_init`: `s = (max - min) / Q`, `z = round(-min / s)` (integer zero-point).
- `grid_init`: GPTQ's "mse" search: shrink the range by `p` in `1, 1 - 1/points, ...`, keep the integer
  zero-point `round(-p * min / s)`, pick the `p` with the least weighted error. GPTQ scores candidates with an
  unweighted `|err|**2.4`; here every init is scored by the same Hessian-weighted squared error.
- `neuqi_init`: NeUQI. For each candidate scale the zero-point is a free float, solved for directly
  (`optimal_zero`); the scale is searched coarse-to-fine around the Min-Max scale.

Objective (diagonal-Hessian weighted error, `h = diag(XᵀX)` from calibration inputs X):
    L(s, z) = Σ_i h_i (w_i - s (clamp(round(w_i / s + z), 0, Q) - z))²

How this differs from the paper (arXiv 2505.17595): the paper's text was not reachable; the zero-point
solve, the coarse-to-fine grid (ratios of the Min-Max scale in [0.1, 1.2], 40 coarse + 40 fine points) and
the grid baseline's scoring are a **reconstruction** (tagged [rec] in the method notes; docs/studies.md). `optimal_zero`
is an exact global solve over the float zero-point; the paper calls its solution "near-optimal", which may
mean a cheaper approximation: `alternating_zero` (z from the quadratic minimum with the codes held fixed,
then re-round, a few times: no interval search) is that alternative, selected with `solver="alternating"`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

ZeroSolver = Literal["exact", "alternating"]
InitName = Literal["minmax", "grid", "neuqi"]
INITS: tuple[InitName, ...] = ("minmax", "grid", "neuqi")

_MIN_SCALE = 1e-12
# float64 entries per chunk of the exact zero-point solve: cache-sized on CPU, large on accelerators
_CHUNK_ENTRIES_CPU = 1 << 16
_CHUNK_ENTRIES_DEVICE = 1 << 24


def levels(bits: int) -> int:
    """The largest code, Q = 2**bits - 1."""
    if bits < 1:
        raise ValueError(f"bits must be >= 1, got {bits}")
    return 2**bits - 1


def hessian_diag(x: Tensor) -> Tensor:
    """diag(XᵀX) / N for inputs x: [N, n] → [n] (the mean squared activation of each input feature)."""
    x = x.reshape(-1, x.shape[-1]).double()
    return (x * x).mean(dim=0)


def to_groups(weight: Tensor, h: Tensor, group_size: int) -> tuple[Tensor, Tensor]:
    """Split weight [out, in] and h [in] into rows of one group each: both → [out * in / g, g].

    `group_size` 0 means per output channel (g = in).
    """
    out_features, in_features = weight.shape
    g = in_features if group_size <= 0 else group_size
    if in_features % g:
        raise ValueError(f"group_size {g} does not divide in_features {in_features}")
    w_rows = weight.reshape(out_features * in_features // g, g)
    h_rows = h.reshape(1, in_features).expand(out_features, in_features).reshape(-1, g)
    return w_rows, h_rows


def fake_quantize(w: Tensor, scale: Tensor, zero: Tensor, bits: int) -> Tensor:
    """Quantise then dequantise: w [R, n], scale and zero [R, 1] → ŵ [R, n], on the grid s·(k - z)."""
    codes = torch.clamp(torch.round(w / scale + zero), 0, levels(bits))
    return scale * (codes - zero)


def weighted_error(w: Tensor, w_hat: Tensor, h: Tensor) -> Tensor:
    """Σ_i h_i (w_i - ŵ_i)² per row: w, w_hat, h [R, n] → [R]."""
    return (h * (w - w_hat) ** 2).sum(dim=-1)


def loss(w: Tensor, h: Tensor, scale: Tensor, zero: Tensor, bits: int) -> Tensor:
    """L(s, z) per row: w, h [R, n], scale, zero [R, 1] → [R]."""
    return weighted_error(w, fake_quantize(w, scale, zero, bits), h)


def minmax_init(w: Tensor, bits: int) -> tuple[Tensor, Tensor]:
    """Min-Max: s = (max - min) / Q, z = round(-min / s). w [R, n] → scale, zero [R, 1]."""
    low = w.min(dim=-1, keepdim=True).values
    high = w.max(dim=-1, keepdim=True).values
    scale = ((high - low) / levels(bits)).clamp_min(_MIN_SCALE)
    return scale, torch.round(-low / scale)


def grid_init(w: Tensor, h: Tensor, bits: int, points: int = 100, max_shrink: float = 0.8) -> tuple[Tensor, Tensor]:
    """GPTQ-"mse"-style range shrinking with an integer zero-point. w, h [R, n] → scale, zero [R, 1].

    Candidates p = 1 - i / points for i < max_shrink * points; range [p·min, p·max] with min ≤ 0 ≤ max as in
    GPTQ's quantizer.
    """
    low = w.min(dim=-1, keepdim=True).values.clamp_max(0)
    high = w.max(dim=-1, keepdim=True).values.clamp_min(0)
    best_err = torch.full((w.shape[0],), torch.inf, dtype=w.dtype, device=w.device)
    best_scale = torch.ones_like(low)
    best_zero = torch.zeros_like(low)
    for i in range(max(1, int(max_shrink * points))):
        p = 1.0 - i / points
        scale = (p * (high - low) / levels(bits)).clamp_min(_MIN_SCALE)
        zero = torch.round(-p * low / scale)
        err = loss(w, h, scale, zero, bits)
        better = err < best_err
        best_err = torch.where(better, err, best_err)
        best_scale = torch.where(better[:, None], scale, best_scale)
        best_zero = torch.where(better[:, None], zero, best_zero)
    return best_scale, best_zero


def optimal_zero(u: Tensor, h: Tensor, bits: int) -> Tensor:
    """Exact argmin over float z of Σ h_i (u_i + z - clamp(round(u_i + z), 0, Q))², per row.

    u = w / s and h: [R, n] → z: [R, 1]. The code of element i steps from j to j + 1 at z = j + ½ - u_i
    (j = 0..Q-1), so the objective is a continuous piecewise quadratic in z. Between two breakpoints it is
    H z² - 2 A z + C with H = Σh, A = Σ h (q - u), C = Σ h (q - u)², minimised at A / H clipped to the
    piece; A and C change by h_i and h_i (2 (j - u_i) + 1) at a step. The slope H z - A only drops at a
    breakpoint, so every local minimum is a fixed point z = A(z) / H, which lies in [-ū, Q - ū]
    (ū = Σ h u / H, since 0 ≤ q ≤ Q): only the pieces in that window of width Q are enumerated. Breakpoints
    are sorted without a comparison sort: each is an integer plus frac(½ - u_i), so one argsort of the n
    fractional parts orders them all (a dense [R, Q + 2, n] layout with empty slots where no step falls).
    Rows are solved in chunks small enough to stay in cache.
    """
    u = u.double()
    h = h.double()
    budget = _CHUNK_ENTRIES_CPU if u.device.type == "cpu" else _CHUNK_ENTRIES_DEVICE
    chunk = max(1, budget // ((levels(bits) + 2) * u.shape[1]))
    if u.shape[0] <= chunk:
        return _optimal_zero_rows(u, h, bits)
    return torch.cat([_optimal_zero_rows(u[i : i + chunk], h[i : i + chunk], bits) for i in range(0, len(u), chunk)])


def _optimal_zero_rows(u: Tensor, h: Tensor, bits: int) -> Tensor:
    rows, n = u.shape
    q_max = levels(bits)
    total_h = h.sum(dim=1, keepdim=True).clamp_min(1e-300)
    start = torch.floor(-(h * u).sum(dim=1, keepdim=True) / total_h)  # window [start, start + Q + 2)
    residual = torch.clamp(torch.round(u + start), 0, q_max) - u
    a0 = (h * residual).sum(dim=1, keepdim=True)
    c0 = (h * residual * residual).sum(dim=1, keepdim=True)

    shifted = 0.5 - u
    whole = torch.floor(shifted)
    frac, order = torch.sort(shifted - whole, dim=1)
    whole = torch.gather(whole, 1, order).view(rows, 1, n)
    h_s = torch.gather(h, 1, order).view(rows, 1, n)
    u_s = torch.gather(u, 1, order).view(rows, 1, n)
    slots = q_max + 2
    slot_start = start.view(rows, 1, 1) + torch.arange(slots, dtype=u.dtype, device=u.device).view(1, slots, 1)
    step = slot_start - whole  # the code j that element i leaves at its breakpoint in this slot: [R, M, n]
    d_a = h_s * ((step >= 0) & (step <= q_max - 1))
    d_c = d_a * (2 * (step - u_s) + 1)
    keys = (slot_start + frac.view(rows, 1, n)).view(rows, -1)  # ascending along each row

    a = torch.cat([a0, d_a.view(rows, -1)], dim=1).cumsum_(dim=1)
    c = torch.cat([c0, d_c.view(rows, -1)], dim=1).cumsum_(dim=1)
    z = a / total_h  # piece k spans [keys[k-1], keys[k]], with keys[-1] = start, keys[K] = start + M
    z[:, 1:-1].clamp_(min=keys[:, :-1]).clamp_(max=keys[:, 1:])
    z[:, :1].clamp_(min=start, max=keys[:, :1])
    z[:, -1:].clamp_(min=keys[:, -1:], max=start + slots)
    value = z * (total_h * z - 2 * a) + c
    best = value.argmin(dim=1, keepdim=True)
    return torch.gather(z, 1, best)


def alternating_zero(u: Tensor, h: Tensor, bits: int, iterations: int = 8) -> Tensor:
    """Approximate float z: start at the Min-Max float zero-point, then alternate z = A / H and re-rounding.

    u, h: [R, n] → z: [R, 1]. Each step cannot raise the objective (the codes are optimal for z, and z is
    optimal for the codes), but it may stop in a local minimum: no interval search.
    """
    u = u.double()
    h = h.double()
    total_h = h.sum(dim=1, keepdim=True).clamp_min(1e-300)
    z = -u.min(dim=1, keepdim=True).values
    for _ in range(iterations):
        codes = torch.clamp(torch.round(u + z), 0, levels(bits))
        z = (h * (codes - u)).sum(dim=1, keepdim=True) / total_h
    return z


def zero_for_scale(w: Tensor, h: Tensor, scale: Tensor, bits: int, solver: ZeroSolver = "exact") -> Tensor:
    """The float zero-point for a given scale: w, h [R, n], scale [R, 1] → z [R, 1] (dtype of w)."""
    u = w.double() / scale.double()
    z = optimal_zero(u, h, bits) if solver == "exact" else alternating_zero(u, h, bits)
    return z.to(w.dtype)


def neuqi_init(
    w: Tensor,
    h: Tensor,
    bits: int,
    coarse: tuple[float, float, int] = (0.1, 1.2, 40),
    fine_points: int = 40,
    solver: ZeroSolver = "exact",
) -> tuple[Tensor, Tensor]:
    """NeUQI: scale-only search with the zero-point solved per scale. w, h [R, n] → scale, zero [R, 1].

    Coarse: s = r · s_minmax for r in linspace(*coarse); fine: `fine_points` ratios spanning one coarse
    step either side of each row's best coarse ratio.
    """
    base_scale, _ = minmax_init(w, bits)
    low, high, count = coarse
    coarse_ratios = torch.linspace(low, high, count, dtype=w.dtype, device=w.device)
    ratios = coarse_ratios.view(1, -1).expand(w.shape[0], -1)
    best_err, best_ratio, best_zero = _search_ratios(w, h, bits, base_scale, ratios, solver)
    if fine_points > 0 and count > 1:
        width = (high - low) / (count - 1)
        offsets = torch.linspace(-width, width, fine_points, dtype=w.dtype, device=w.device)
        fine = (best_ratio + offsets.view(1, -1)).clamp_min(1e-3)
        err, ratio, zero = _search_ratios(w, h, bits, base_scale, fine, solver)
        better = err < best_err
        best_ratio = torch.where(better[:, None], ratio, best_ratio)
        best_zero = torch.where(better[:, None], zero, best_zero)
    return base_scale * best_ratio, best_zero


def _search_ratios(
    w: Tensor, h: Tensor, bits: int, base_scale: Tensor, ratios: Tensor, solver: ZeroSolver
) -> tuple[Tensor, Tensor, Tensor]:
    """Best (error [R], ratio [R, 1], zero [R, 1]) over per-row candidate ratios [R, K]."""
    best_err = torch.full((w.shape[0],), torch.inf, dtype=w.dtype, device=w.device)
    best_ratio = torch.ones_like(base_scale)
    best_zero = torch.zeros_like(base_scale)
    for k in range(ratios.shape[1]):
        ratio = ratios[:, k : k + 1]
        scale = base_scale * ratio
        zero = zero_for_scale(w, h, scale, bits, solver)
        err = loss(w, h, scale, zero, bits)
        better = err < best_err
        best_err = torch.where(better, err, best_err)
        best_ratio = torch.where(better[:, None], ratio, best_ratio)
        best_zero = torch.where(better[:, None], zero, best_zero)
    return best_err, best_ratio, best_zero


@dataclass(frozen=True)
class ScaleSearch:
    """Search settings of the grid and NeUQI inits (defaults: GPTQ's grid, the reconstructed NeUQI grid)."""

    grid_points: int = 100
    grid_max_shrink: float = 0.8
    coarse_low: float = 0.1
    coarse_high: float = 1.2
    coarse_points: int = 40
    fine_points: int = 40
    solver: ZeroSolver = "exact"


def init_params(
    init: InitName, w: Tensor, h: Tensor, bits: int, search: ScaleSearch = ScaleSearch()
) -> tuple[Tensor, Tensor]:
    """Dispatch by name: w, h [R, n] → scale, zero [R, 1]."""
    if init == "minmax":
        return minmax_init(w, bits)
    if init == "grid":
        return grid_init(w, h, bits, search.grid_points, search.grid_max_shrink)
    if init == "neuqi":
        coarse = (search.coarse_low, search.coarse_high, search.coarse_points)
        return neuqi_init(w, h, bits, coarse, search.fine_points, search.solver)
    raise ValueError(f"unknown init {init!r}; expected one of {INITS}")


def quantize_weight(
    weight: Tensor, h: Tensor, bits: int, init: InitName, group_size: int = 0, search: ScaleSearch = ScaleSearch()
) -> Tensor:
    """Round-to-nearest quantisation of a linear layer's weight [out, in] with h [in]; returns Ŵ [out, in]."""
    w_rows, h_rows = to_groups(weight, h, group_size)
    scale, zero = init_params(init, w_rows, h_rows, bits, search)
    return fake_quantize(w_rows, scale, zero, bits).reshape(weight.shape)
