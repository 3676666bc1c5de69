"""Round-to-nearest quantisation of a causal LM's linear layers under a chosen initialisation.

1. `calibrate`: run calibration blocks through the full-precision model and collect, for every linear layer,
   the diagonal of its input Gram matrix, h = diag(XᵀX) / N (GPTQ's Hessian 2XᵀX up to a constant).
2. `quantize_linears`: replace every selected weight W [out, in] by its RTN fake-quantised version with the
   (scale, zero) that the init (`minmax`, `grid`, `neuqi`) picks per output channel or group.

Differences from the paper: the paper uses its (s, z) as the initialisation of GPTQ (and optionally a light
distillation); here the weights are rounded to nearest (RTN) with them, as the brief asks, so the
init alone is measured. All Hessians come from the full-precision model (no sequential, quantised-input
calibration). The study quantises every linear layer, `lm_head` included (`include_lm_head`; GPTQ and most
papers keep it in full precision, which is one switch away); the embeddings are never quantised.
h is damped by `damp · mean(h)` (GPTQ's `percdamp`) so that dead input features keep a small weight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from torch import Tensor, nn

from raygent.jobs.neuqi.quantize import InitName, ScaleSearch, quantize_weight


def quantizable_linears(model: nn.Module, include_lm_head: bool = False) -> Iterator[tuple[str, nn.Linear]]:
    """The linear layers to quantise, by qualified name (decoder blocks; `lm_head` only if asked)."""
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and (include_lm_head or not name.endswith("lm_head")):
            yield name, module


@torch.no_grad()
def calibrate(
    model: nn.Module, blocks: Tensor, include_lm_head: bool = False, batch_size: int = 16
) -> dict[str, Tensor]:
    """h = mean of x² per input feature of every quantisable linear, over blocks [N, T] of token ids."""
    sums: dict[str, Tensor] = {}
    counts: dict[str, int] = {}
    handles = []

    def hook(name: str) -> Callable[[nn.Module, tuple[Tensor, ...]], None]:
        def record(_module: nn.Module, inputs: tuple[Tensor, ...]) -> None:
            x = inputs[0].detach().reshape(-1, inputs[0].shape[-1]).double()
            sums[name] = sums.get(name, 0) + (x * x).sum(dim=0)
            counts[name] = counts.get(name, 0) + x.shape[0]

        return record

    for name, linear in quantizable_linears(model, include_lm_head):
        handles.append(linear.register_forward_pre_hook(hook(name)))
    try:
        device = next(model.parameters()).device
        for start in range(0, len(blocks), batch_size):
            model(input_ids=blocks[start : start + batch_size].to(device))
    finally:
        for handle in handles:
            handle.remove()
    return {name: (sums[name] / counts[name]).float() for name in sums}


@torch.no_grad()
def quantize_linears(
    model: nn.Module,
    hessians: dict[str, Tensor],
    bits: int,
    init: InitName,
    group_size: int = 0,
    search: ScaleSearch = ScaleSearch(),
    damp: float = 0.01,
) -> dict[str, float]:
    """Fake-quantise, in place, every linear named in `hessians`; returns each layer's Σ h (W - Ŵ)² / Σ h W²."""
    modules = dict(model.named_modules())
    errors = {}
    for name, h in hessians.items():
        weight = modules[name].weight
        h_damped = h.to(weight.device) + damp * h.mean()
        w_hat = quantize_weight(weight.float(), h_damped.float(), bits, init, group_size, search)
        norm = float((h_damped * weight.float() ** 2).sum())
        errors[name] = float((h_damped * (weight.float() - w_hat) ** 2).sum()) / norm
        weight.copy_(w_hat.to(weight.dtype))
    return errors


def snapshot(model: nn.Module, names: list[str]) -> dict[str, Tensor]:
    """CPU copies of the named linears' weights, to restore the full-precision model between inits."""
    modules = dict(model.named_modules())
    return {name: modules[name].weight.detach().to("cpu", copy=True) for name in names}


@torch.no_grad()
def restore(model: nn.Module, weights: dict[str, Tensor]) -> None:
    modules = dict(model.named_modules())
    for name, weight in weights.items():
        modules[name].weight.copy_(weight)
