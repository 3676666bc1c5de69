"""HySCAN (≙ HyCAS) deterministic building blocks: 1-Lipschitz convolutions, their tri-branch gate, GroupSort.

Each linear layer has norm ≤ 1 once `finalize_norms` has run (checked by `norms.operator_norm`): `SNConv2d`
(the paper's ECONV: kernel divided by max(σ̂, 1)), `FrozenRPConv2d` (frozen random projection; its per-sample
random scale is the one stochastic element here), `FreqRPConv` (DCT → mask → IDCT → frozen orthogonal mix → 1×1
ECONV), `TriBranchConv` (the three under a per-channel softmax gate) and `SNLinear` (the head). `GroupSort` is a
1-Lipschitz activation. `set_stochastic(model, False)` turns every stochastic element off (pitfall (a) of the notes).

How this differs from the official notebook (github.com/misti1203/HyCAS), each one config switch from it:

- A per-channel convex gate of 1-Lipschitz maps is *not* 1-Lipschitz in general (gating channel 1 to branch A and
  channel 2 to a branch that copies channel 1 doubles the energy; the bound is √3). `TriBranchConv` divides by a
  provable bound of the gated sum (`gate_norm="none"` is the notebook's form).
- The notebook divides the frozen RP kernel by a random-start power-iteration estimate σ̂ ≤ ‖A‖, so the layer can
  exceed norm 1. `rp_scale="safe"` (default) divides by an upper bound σ* and multiplies by σ̂/σ* ≤ 1 per sample,
  the same random variation on the non-expansive side; `rp_scale="notebook"` is the original (per sample here, so
  that smoothing samples stay independent; the notebook shares a batch mean).
- ECONV normalises by the FFT bound of the padded circular conv (the notebook's "exact" mode; guaranteed) by
  default, on the polyphase kernel for strided convs, tracked by power iteration per frequency during training;
  `conv_norm="power"` is its other mode. σ̂ is a constant in the backward pass (the notebook differentiates
  through it). Kernels start delta-orthogonal (the notebook: He-normal), so normalising by the top singular value
  does not shrink typical signals.
- The notebook centres its elliptical DCT mask at (H/2, W/2), which in DCT coordinates is a band-pass; we centre it
  at the DC coefficient so the branch is the low-pass the paper describes (`mask_center="notebook"` restores it).
- The learnable and spatial-RP branches share one convolution call (their kernels stacked): the same map, cheaper.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from raygent.jobs.hyscan.norms import (
    conv_adjoint,
    conv_grid,
    conv_norm_bound,
    conv_spectrum,
    polyphase_kernel,
    power_iteration,
    real_blocks,
    unit,
)

ConvNorm = Literal["fft", "power"]


def delta_orthogonal(cin: int, cout: int, kernel: int, jitter: float = 0.01) -> Tensor:
    """(cout, cin, k, k) kernel: a random (semi-)orthogonal matrix at the centre tap plus small Gaussian jitter.

    At stride 1 the conv is then close to an isometry (all singular values ≈ 1), so normalising by the largest one
    does not shrink typical signals, unlike a He-normal kernel, whose typical gain is far below its top singular
    value (Xiao et al. 2018's delta-orthogonal init; the notebook uses He-normal).
    """
    weight = jitter * torch.randn(cout, cin, kernel, kernel) / math.sqrt(cin * kernel * kernel)
    centre = torch.nn.init.orthogonal_(torch.empty(cout, cin))
    weight[:, :, kernel // 2, kernel // 2] += centre
    return weight


class SNConv2d(nn.Module):
    """ECONV: conv whose kernel is divided by max(σ̂, 1).

    `norm="fft"`: σ̂ tracks `conv_norm_bound` (an upper bound on ‖A‖), by one batched power-iteration step per DFT
    frequency per `refresh` during training and exactly (an SVD per frequency) after `finalize`, so the deployed
    layer is provably ≤ 1. `norm="power"` (cheap at paper widths): σ̂ = ‖A u‖ with u a persistent power-iteration
    direction on the conv itself; it approaches ‖A‖ from below.
    """

    u: Tensor  # buffer: power-iteration direction(s), (frequencies, 2·cin·stride²) or (1, cin, H, W)
    sigma: Tensor  # buffer (): the current σ̂

    def __init__(
        self,
        cin: int,
        cout: int,
        kernel: int,
        in_hw: tuple[int, int],
        stride: int = 1,
        bias: bool = True,
        norm: ConvNorm = "fft",
    ):
        super().__init__()
        self.stride, self.padding, self.in_hw, self.norm = stride, kernel // 2, in_hw, norm
        self.in_shape = (cin, *in_hw)
        self.grid = conv_grid(in_hw, kernel, stride, self.padding)
        self.weight = nn.Parameter(delta_orthogonal(cin, cout, kernel))
        self.bias = nn.Parameter(torch.zeros(cout)) if bias else None
        if norm == "fft":
            frequencies = self.grid[0] * (self.grid[1] // 2 + 1)
            self.register_buffer("u", unit(torch.randn(frequencies, 2 * cin * stride * stride)))
        else:
            self.register_buffer("u", unit(torch.randn(1, cin, *in_hw)))
        self.register_buffer("sigma", torch.ones(()))
        self.refresh(3)

    @torch.no_grad()
    def refresh(self, iters: int) -> None:
        """Advance the power iteration by `iters` steps and store σ̂ (once per training step, before the forward)."""
        if self.norm == "power":
            u, sigma = power_iteration(
                lambda x: F.conv2d(x, self.weight, None, self.stride, self.padding), self.u, iters
            )
            self.u.copy_(u)
            self.sigma.copy_(sigma[0])
            return
        blocks = real_blocks(conv_spectrum(polyphase_kernel(self.weight, self.stride), self.grid))
        u = self.u.unsqueeze(-1)
        for _ in range(iters):
            u = blocks.mT @ (blocks @ u)
            u = u / u.norm(dim=1, keepdim=True).clamp_min(1e-12)
        self.u.copy_(u.squeeze(-1))
        self.sigma.copy_((blocks @ u).norm(dim=1).max())

    @torch.no_grad()
    def finalize(self, iters: int = 200) -> None:
        """Fix the deployed σ̂: the exact FFT bound (`fft`), or `iters` more power iterations (`power`)."""
        if self.norm == "fft":
            self.sigma.copy_(conv_norm_bound(self.weight, self.in_hw, self.padding, self.stride))
        else:
            self.refresh(iters)

    def kernel(self) -> Tensor:
        """The normalised kernel (cout, cin, k, k)."""
        return self.weight / self.sigma.clamp_min(1.0)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.kernel(), self.bias, self.stride, self.padding)


class SNLinear(nn.Module):
    """Dense layer divided by max(‖W‖₂, 1), ‖W‖₂ exact (the classification head)."""

    sigma: Tensor  # buffer (): ‖W‖₂

    def __init__(self, fin: int, fout: int):
        super().__init__()
        self.in_shape = (fin,)
        self.weight = nn.Parameter(torch.randn(fout, fin) / math.sqrt(fin))
        self.bias = nn.Parameter(torch.zeros(fout))
        self.register_buffer("sigma", torch.ones(()))
        self.refresh(1)

    @torch.no_grad()
    def refresh(self, iters: int) -> None:
        self.sigma.copy_(torch.linalg.matrix_norm(self.weight, ord=2))

    def finalize(self, iters: int = 200) -> None:
        self.refresh(iters)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight / self.sigma.clamp_min(1.0), self.bias)


def orthogonal_matrix(n: int, generator: torch.Generator) -> Tensor:
    """A frozen random orthogonal (n, n) matrix (QR of a Gaussian)."""
    q, _ = torch.linalg.qr(torch.randn(n, n, generator=generator, dtype=torch.float64))
    return q.float().contiguous()


def rp_kernel(cin: int, cout: int, kernel: int, generator: torch.Generator) -> Tensor:
    """Frozen RP kernel (cout, cin, k, k): orthonormal columns by QR of a Gaussian K×f matrix (K = cin·k²);
    unit-norm random columns when f > K, as in the notebook."""
    fan = cin * kernel * kernel
    gauss = torch.randn(fan, cout, generator=generator, dtype=torch.float64)
    if cout <= fan:
        cols, _ = torch.linalg.qr(gauss)
    else:
        cols = gauss / gauss.norm(dim=0, keepdim=True)
    return cols.T.reshape(cout, cin, kernel, kernel).float().contiguous()


class FrozenRPConv2d(nn.Module):
    """Spatial RP branch: frozen orthogonal 1×1 mix then frozen RP 3×3 conv (folded into one kernel), divided by
    σ* = `conv_norm_bound` ≥ its norm, so ≤ 1 when deterministic.

    Stochastic (default), each sample b is rescaled by a random power-iteration estimate σ̂_b (`power_iters` steps
    from a fresh Gaussian start): factor σ̂_b/σ* ≤ 1 (`rp_scale="safe"`) or, as in the notebook, σ*/max(σ̂_b, 1)
    (`"notebook"`, which can exceed norm 1). The kernel is frozen, so σ̂'s distribution never changes: with
    `bank_size > 0` each sample draws σ̂ uniformly from that many estimates computed once at construction (i.i.d.
    draws of the same random variable at a fraction of the cost); `bank_size=0` runs the iteration on every call.
    """

    weight: Tensor  # buffer (cout, cin, 3, 3): the frozen folded kernel
    sigma_star: Tensor  # buffer (): the upper bound σ*
    bank: Tensor  # buffer (bank_size,): precomputed estimates σ̂

    def __init__(
        self,
        cin: int,
        cout: int,
        in_hw: tuple[int, int],
        stride: int,
        generator: torch.Generator,
        power_iters: int = 2,
        rp_scale: Literal["safe", "notebook"] = "safe",
        bank_size: int = 1024,
    ):
        super().__init__()
        self.stride, self.in_hw, self.power_iters, self.rp_scale = stride, in_hw, power_iters, rp_scale
        self.in_shape = (cin, *in_hw)
        self.stochastic = True
        mix = orthogonal_matrix(cin, generator)
        folded = torch.einsum("ojhw,ji->oihw", rp_kernel(cin, cout, 3, generator), mix).contiguous()
        self.register_buffer("weight", folded)
        self.register_buffer("sigma_star", conv_norm_bound(folded, in_hw, 1, stride))
        with torch.no_grad():
            chunks = [self.random_estimate(min(256, bank_size - i), generator) for i in range(0, bank_size, 256)]
        self.register_buffer("bank", torch.cat(chunks) if chunks else torch.empty(0))

    def random_estimate(self, batch: int, generator: torch.Generator | None = None) -> Tensor:
        """(batch,) power-iteration estimates σ̂ ≤ ‖A‖ from independent random starts."""
        shape = (batch, self.weight.shape[1], *self.in_hw)
        u = unit(torch.randn(shape, generator=generator).to(self.weight.device))
        for _ in range(self.power_iters):
            u = unit(
                conv_adjoint(F.conv2d(u, self.weight, None, self.stride, 1), self.weight, self.stride, 1, self.in_hw)
            )
        return F.conv2d(u, self.weight, None, self.stride, 1).flatten(1).norm(dim=1)

    def kernel(self) -> Tensor:
        """The deterministic kernel W/σ* (cout, cin, 3, 3)."""
        return self.weight / self.sigma_star

    def factor(self, batch: int, device: torch.device) -> Tensor:
        """(batch,) per-sample random scale factors (all 1 when not stochastic)."""
        if not self.stochastic:
            return torch.ones(batch, device=device)
        if len(self.bank):
            sigma_hat = self.bank[torch.randint(0, len(self.bank), (batch,), device=device)]
        else:
            sigma_hat = self.random_estimate(batch)
        if self.rp_scale == "safe":
            return sigma_hat / self.sigma_star
        return self.sigma_star / sigma_hat.clamp_min(1.0)

    def forward(self, x: Tensor) -> Tensor:
        y = F.conv2d(x, self.kernel(), None, self.stride, 1)
        return y * self.factor(len(x), x.device).view(-1, 1, 1, 1)


def dct_matrix(n: int) -> Tensor:
    """Orthonormal DCT-II matrix (n, n) in float64: X̂ = C x, x = Cᵀ X̂."""
    k = torch.arange(n, dtype=torch.float64).view(-1, 1)
    i = torch.arange(n, dtype=torch.float64).view(1, -1)
    mat = math.sqrt(2.0 / n) * torch.cos(math.pi * (2 * i + 1) * k / (2 * n))
    mat[0] /= math.sqrt(2.0)
    return mat


def frequency_mask(
    hw: tuple[int, int], keep_ratio: float, seed: int, center: Literal["dc", "notebook"] = "dc"
) -> Tensor:
    """(H, W) mask in [0, 1]: an ellipse of radii keep_ratio·(H, W) around the DC coefficient (or, as in the
    notebook, keep_ratio·(H/2, W/2) around the centre), plus three random horizontal bands set to ≥ 0.7."""
    h, w = hw
    rng = np.random.default_rng(seed)
    yy, xx = np.ogrid[:h, :w]
    if center == "dc":
        cy, cx, ry, rx = 0.0, 0.0, max(1.0, keep_ratio * h), max(1.0, keep_ratio * w)
    else:
        cy, cx = h // 2, w // 2
        ry, rx = max(1, int(keep_ratio * cy)), max(1, int(keep_ratio * cx))
    mask = ((((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2) <= 1.0).astype(np.float64)
    band = max(1, int(0.05 * h))
    for _ in range(3):
        y0 = int(rng.integers(0, max(1, h - band)))
        mask[y0 : y0 + band, :] = np.maximum(mask[y0 : y0 + band, :], 0.7)
    return torch.from_numpy(mask)


def frequency_filter(hw: tuple[int, int], mask: Tensor) -> Tensor:
    """(HW, HW) matrix of x ↦ IDCT(mask ⊙ DCT(x)) on row-major flattened images; symmetric, norm = max(mask)."""
    dct = torch.kron(dct_matrix(hw[0]), dct_matrix(hw[1]))
    return (dct.T @ (mask.flatten().view(-1, 1) * dct)).float().contiguous()


class FreqRPConv(nn.Module):
    """Frequency RP branch: 2D DCT → fixed mask → IDCT (one precomputed spatial filter per channel) → frozen
    orthogonal 1×1 mix → 1×1 ECONV with the block's stride (bias-free)."""

    filter: Tensor  # buffer (HW, HW): the DCT-mask spatial filter
    mix: Tensor  # buffer (cin, cin): the frozen orthogonal channel mix

    def __init__(
        self,
        cin: int,
        cout: int,
        in_hw: tuple[int, int],
        stride: int,
        generator: torch.Generator,
        keep_ratio: float = 0.4,
        mask_center: Literal["dc", "notebook"] = "dc",
        norm: ConvNorm = "fft",
    ):
        super().__init__()
        self.in_shape = (cin, *in_hw)
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        self.register_buffer("filter", frequency_filter(in_hw, frequency_mask(in_hw, keep_ratio, seed, mask_center)))
        self.register_buffer("mix", orthogonal_matrix(cin, generator))
        self.post = SNConv2d(cin, cout, 1, in_hw, stride=stride, bias=False, norm=norm)

    def filtered(self, x: Tensor) -> Tensor:
        """The DCT-masked input, (B, cin, H, W)."""
        return (x.flatten(2) @ self.filter).view_as(x)

    def channel_matrix(self) -> Tensor:
        """(cout, cin) = normalised post-ECONV ∘ orthogonal mix (channel maps commute with the spatial filter)."""
        return self.post.kernel()[:, :, 0, 0] @ self.mix

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(self.filtered(x), self.channel_matrix()[:, :, None, None], None, self.post.stride)


class TriBranchConv(nn.Module):
    """Per-channel softmax gate a ∈ Δ³ over (frequency RP, spatial RP, learnable 3×3 ECONV), then bias.

    With `gate_norm="bound"` the gated sum is divided by max(√(Σ_k max_c a_kc), 1): per output coordinate i,
    convexity gives y_i² ≤ Σ_k a_k,c(i) (B_k x)_i², so ‖y‖² ≤ Σ_k max_c a_kc ‖B_k x‖² ≤ Σ_k max_c a_kc ‖x‖², and
    the division makes the assembled layer provably ≤ 1 while keeping per-channel gates.
    """

    enabled: Tensor  # buffer (3,) bool: which branches are built

    def __init__(
        self,
        cin: int,
        cout: int,
        in_hw: tuple[int, int],
        stride: int,
        generator: torch.Generator,
        branches: tuple[bool, bool] = (True, True),
        gate_norm: Literal["bound", "none"] = "bound",
        conv_norm: ConvNorm = "fft",
        rp_power_iters: int = 2,
        rp_scale: Literal["safe", "notebook"] = "safe",
        mask_center: Literal["dc", "notebook"] = "dc",
    ):
        super().__init__()
        use_freq, use_spatial = branches
        self.stride, self.cout, self.in_shape = stride, cout, (cin, *in_hw)
        self.freq = (
            FreqRPConv(cin, cout, in_hw, stride, generator, mask_center=mask_center, norm=conv_norm)
            if use_freq
            else None
        )
        self.spatial = (
            FrozenRPConv2d(cin, cout, in_hw, stride, generator, rp_power_iters, rp_scale) if use_spatial else None
        )
        self.learn = SNConv2d(cin, cout, 3, in_hw, stride=stride, bias=False, norm=conv_norm)
        self.register_buffer("enabled", torch.tensor([use_freq, use_spatial, True]))
        self.gate_logits = nn.Parameter(torch.zeros(3, cout))
        self.bias = nn.Parameter(torch.zeros(cout))
        self.gate_norm = gate_norm

    def gates(self) -> Tensor:
        """(3, cout) convex weights, rows = (freq, spatial, learnable); a disabled branch gets weight 0."""
        logits = self.gate_logits.masked_fill(~self.enabled.view(3, 1), float("-inf"))
        return torch.softmax(logits, dim=0)

    def gate_scale(self) -> Tensor:
        """The divisor max(√(Σ_k max_c a_kc), 1) (1 with `gate_norm="none"`)."""
        if self.gate_norm == "none":
            return torch.ones((), device=self.gate_logits.device)
        return self.gates().max(dim=1).values.sum().sqrt().clamp_min(1.0)

    def forward(self, x: Tensor) -> Tensor:
        a = (self.gates() / self.gate_scale()).view(3, -1, 1, 1, 1)
        kernel = a[2] * self.learn.kernel()
        if self.spatial is None:
            out = F.conv2d(x, kernel, self.bias, self.stride, 1)
        elif not self.spatial.stochastic:
            out = F.conv2d(x, kernel + a[1] * self.spatial.kernel(), self.bias, self.stride, 1)
        else:
            both = F.conv2d(x, torch.cat([kernel, a[1] * self.spatial.kernel()]), None, self.stride, 1)
            scale = self.spatial.factor(len(x), x.device).view(-1, 1, 1, 1)
            out = torch.addcmul(both[:, : self.cout], both[:, self.cout :], scale) + self.bias.view(1, -1, 1, 1)
        if self.freq is not None:
            channel = a[0] * self.freq.channel_matrix()[:, :, None, None]
            out = out + F.conv2d(self.freq.filtered(x), channel, None, self.stride)
        return out


class GroupSort(nn.Module):
    """GroupSort with groups of 2 (MaxMin), pairing channel i with channel i + C/2: the output is
    [min(x_i, x_{i+C/2}); max(x_i, x_{i+C/2})]. 1-Lipschitz and gradient-norm preserving; the pairing differs from
    the notebook's adjacent pairs by a fixed channel permutation, which the next layer absorbs."""

    def forward(self, x: Tensor) -> Tensor:
        first, second = x.chunk(2, dim=1)
        return torch.cat((torch.minimum(first, second), torch.maximum(first, second)), dim=1)


def set_stochastic(model: nn.Module, enabled: bool) -> None:
    """Switch every stochastic element (RP scale, attention noise) of `model` on or off."""
    for module in model.modules():
        if hasattr(module, "stochastic"):
            module.stochastic = enabled  # type: ignore[assignment]  # torch types Module.__setattr__ for Tensor|Module only


def refresh_norms(model: nn.Module, iters: int = 1) -> None:
    """Advance every layer's power iteration by `iters` steps; call once per training step, before the forward."""
    for module in model.modules():
        if isinstance(module, SNConv2d | SNLinear):
            module.refresh(iters)


def finalize_norms(model: nn.Module, iters: int = 200) -> None:
    """Fix every layer's deployed normaliser after training (exact FFT bounds by default)."""
    for module in model.modules():
        if isinstance(module, SNConv2d | SNLinear):
            module.finalize(iters)
