"""Operator-norm tools for the HySCAN layers: power iteration on any linear map, and a guaranteed conv bound.

`operator_norm` is the numerical check of the claim "every deterministic layer has norm ≤ 1": it runs power
iteration on the layer *as assembled* (x ↦ layer(x) − layer(0), adjoint by autograd), independent of how the layer
normalises itself. `conv_norm_bound` is what the layers normalise by.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

EPS = 1e-12


def unit(x: Tensor) -> Tensor:
    """Normalise each sample (dim 0) to unit ℓ2 norm; x: (B, ...)."""
    return x / x.flatten(1).norm(dim=1).clamp_min(EPS).view(-1, *([1] * (x.dim() - 1)))


def power_iteration(linear: Callable[[Tensor], Tensor], u: Tensor, iters: int) -> tuple[Tensor, Tensor]:
    """`iters` steps of u ← AᵀAu/‖AᵀAu‖ for a *linear* map A, the adjoint taken by autograd.

    u: (B, *in_shape), one independent start per sample. Returns the unit vectors (B, *in_shape), detached, and the
    per-sample estimate ‖A u‖ (B,), a lower bound on ‖A‖₂ that converges to it from below.
    """
    u = unit(u.detach())
    for _ in range(iters):
        with torch.enable_grad():
            leaf = u.detach().requires_grad_(True)
            out = linear(leaf)
            (grad,) = torch.autograd.grad(out, leaf, grad_outputs=out.detach())
        u = unit(grad.detach())
    with torch.no_grad():
        sigma = linear(u).flatten(1).norm(dim=1)
    return u, sigma


def operator_norm(
    layer: Callable[[Tensor], Tensor], in_shape: tuple[int, ...], iters: int = 100, seed: int = 0
) -> float:
    """Operator 2-norm of the linear part of an affine `layer` on inputs of shape `in_shape` (no batch dim).

    Power iteration on x ↦ layer(x) − layer(0), the layer as assembled (normalisation, gates and all), from 4
    random starts; returns the largest estimate (each is a lower bound that converges to the norm).
    """
    generator = torch.Generator().manual_seed(seed)
    start = torch.randn((4, *in_shape), generator=generator)
    with torch.no_grad():
        offset = layer(torch.zeros_like(start[:1]))

    def linear(x: Tensor) -> Tensor:
        return layer(x) - offset

    _, sigma = power_iteration(linear, start, iters)
    return float(sigma.max())


def conv_spectrum(weight: Tensor, grid: tuple[int, int]) -> Tensor:
    """(frequencies, cout, cin) complex DFT of a (cout, cin, k, k) kernel zero-padded to `grid`; half the plane
    (`rfft2`), since a real kernel's transform at −ω is the conjugate of that at ω (same singular values)."""
    spec = torch.fft.rfft2(weight, s=grid)
    return spec.permute(2, 3, 0, 1).reshape(-1, *weight.shape[:2])


def real_blocks(spec: Tensor) -> Tensor:
    """Complex (F, m, n) → real (F, 2m, 2n) [[Re, −Im], [Im, Re]]: same singular values (each twice), and real
    batched matmuls are far faster than complex ones on CPU."""
    re, im = spec.real, spec.imag
    return torch.cat([torch.cat([re, -im], dim=2), torch.cat([im, re], dim=2)], dim=1)


def polyphase_kernel(weight: Tensor, stride: int) -> Tensor:
    """(cout, cin·s², k', k'), k' = ⌈k/s⌉: the stride-s correlation with `weight` written as a stride-1 correlation
    of the s×s polyphase components of the (padded) input, K'[o, (i, p, q), a, b] = K[o, i, s·a + p, s·b + q]."""
    if stride == 1:
        return weight
    cout, cin, k, _ = weight.shape
    size = -(-k // stride)
    padded = torch.nn.functional.pad(weight, (0, size * stride - k, 0, size * stride - k))
    poly = padded.reshape(cout, cin, size, stride, size, stride).permute(0, 1, 3, 5, 2, 4)
    return poly.reshape(cout, cin * stride * stride, size, size)


def conv_grid(in_hw: tuple[int, int], kernel: int, stride: int, padding: int) -> tuple[int, int]:
    """Circular grid on which `polyphase_kernel` bounds the zero-padded strided conv without wrap-around."""
    size = -(-kernel // stride)
    grid = []
    for n in in_hw:
        padded, out = n + 2 * padding, (n + 2 * padding - kernel) // stride + 1
        grid.append(max(-(-padded // stride), out + size - 1))
    return grid[0], grid[1]


def conv_norm_bound(weight: Tensor, in_hw: tuple[int, int], padding: int, stride: int = 1) -> Tensor:
    """Guaranteed upper bound on ‖conv‖₂ of a zero-padded, stride-s conv on (H, W) inputs.

    Zero padding is an isometric embedding, the s×s polyphase split of the padded input a permutation, and the
    strided conv a crop of the stride-1 correlation of those components with `polyphase_kernel`; that correlation
    is a crop of the circular one on `conv_grid`, whose norm is max over DFT frequencies ω of σ_max(K̂'(ω)). For
    s = 1 this is the notebook's "exact" ECONV mode taken on the padded grid (so that it bounds the zero-padded
    conv); for s > 1 it is far tighter than the stride-1 bound, which ignores the subsampling.
    """
    k = weight.shape[-1]
    spectrum = conv_spectrum(polyphase_kernel(weight, stride), conv_grid(in_hw, k, stride, padding))
    return torch.linalg.matrix_norm(spectrum, ord=2).max()


def conv_adjoint(y: Tensor, weight: Tensor, stride: int, padding: int, in_hw: tuple[int, int]) -> Tensor:
    """Adjoint of `F.conv2d(·, weight, None, stride, padding)` on (H, W) inputs, applied to y: (B, cout, H', W')."""
    k = weight.shape[-1]
    extra = tuple(in_hw[d] - ((y.shape[2 + d] - 1) * stride - 2 * padding + k) for d in range(2))
    return F.conv_transpose2d(y, weight, None, stride, padding, output_padding=extra)
