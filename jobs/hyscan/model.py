"""The HySCAN hybrid network, the plain-CNN baseline, and the numerical Lipschitz checks on them.

`HybridNet` follows the notebook's ResNet layout at any width: a tri-branch stem + GroupSort, then per stage
`blocks_per_stage` contractive residual blocks (tri-branch conv → GroupSort → ECONV → GroupSort, mixed with the
skip as (1−β)·skip + β·out), one noisy attention added residually after the last stage (a + att(a)), and a
spectrally normalised linear head on the flattened features. With every stochastic element off the trunk is
1-Lipschitz by construction and the attention residual makes the whole net empirically ≤ 2-Lipschitz.

Differences from the notebook: it puts a residual attention after nearly every conv and a non-normalised softmax
Dense head; we keep one attention by default (so the deterministic trunk keeps its 1-Lipschitz certificate;
`attention="every_block"`, closer to the notebook, adds one after every block, each doubling the bound) and a
normalised head trained with a loss-side logit temperature (`train.py`), which leaves argmax and certificates
unchanged. Its ResNet-18 has four stages of two blocks at widths 64–512; the laptop study uses two stages of one
block at 16/32 (all config). `PlainCNN` is our baseline: the same widths, strides and conv count with ReLU and no
normalisation.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn

from raygent.jobs.hyscan.attention import NoisyAttention
from raygent.jobs.hyscan.layers import (
    FreqRPConv,
    FrozenRPConv2d,
    GroupSort,
    SNConv2d,
    SNLinear,
    TriBranchConv,
    set_stochastic,
)
from raygent.jobs.hyscan.norms import operator_norm

Branches = Literal["all", "learn", "learn+spatial", "learn+freq"]
AttentionPlacement = Literal["last", "every_block"]
_BRANCH_FLAGS: dict[str, tuple[bool, bool]] = {
    "all": (True, True),
    "learn": (False, False),
    "learn+spatial": (False, True),
    "learn+freq": (True, False),
}


def _out_hw(hw: tuple[int, int], stride: int) -> tuple[int, int]:
    return ((hw[0] - 1) // stride + 1, (hw[1] - 1) // stride + 1)


class HybridBlock(nn.Module):
    """Contractive residual block: (1−β)·skip(x) + β·GS(ECONV(GS(TriBranch(x)))), β = sigmoid(learned)."""

    def __init__(self, cin: int, cout: int, hw: tuple[int, int], stride: int, generator: torch.Generator, **tri):
        super().__init__()
        out_hw = _out_hw(hw, stride)
        self.conv1 = TriBranchConv(cin, cout, hw, stride, generator, **tri)
        norm = tri.get("conv_norm", "fft")
        self.conv2 = SNConv2d(cout, cout, 3, out_hw, norm=norm)
        self.act = GroupSort()
        self.proj = SNConv2d(cin, cout, 1, hw, stride=stride, norm=norm) if (cin != cout or stride != 1) else None
        self.beta_logit = nn.Parameter(torch.zeros(()))

    def forward(self, x: Tensor) -> Tensor:
        out = self.act(self.conv2(self.act(self.conv1(x))))
        skip = x if self.proj is None else self.proj(x)
        return torch.lerp(skip, out, torch.sigmoid(self.beta_logit))


class HybridNet(nn.Module):
    """HySCAN classifier. Stochastic by default (attention noise and RP scale on, also in eval)."""

    def __init__(
        self,
        in_channels: int,
        image_hw: tuple[int, int],
        num_classes: int,
        widths: tuple[int, ...] = (16, 32),
        strides: tuple[int, ...] = (1, 2),
        blocks_per_stage: int = 1,
        attention_noise: float = 0.6,
        branches: Branches = "all",
        gate_norm: Literal["bound", "none"] = "bound",
        conv_norm: Literal["fft", "power"] = "fft",
        rp_power_iters: int = 2,
        rp_scale: Literal["safe", "notebook"] = "safe",
        mask_center: Literal["dc", "notebook"] = "dc",
        attention: AttentionPlacement = "last",
        seed: int = 0,
    ):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        tri = {
            "branches": _BRANCH_FLAGS[branches],
            "gate_norm": gate_norm,
            "conv_norm": conv_norm,
            "rp_power_iters": rp_power_iters,
            "rp_scale": rp_scale,
            "mask_center": mask_center,
        }
        hw = image_hw
        self.stem = TriBranchConv(in_channels, widths[0], hw, 1, generator, **tri)
        self.stem_act = GroupSort()
        blocks: list[nn.Module] = []
        attentions: list[nn.Module] = []
        cin = widths[0]
        for width, stride in zip(widths, strides, strict=True):
            for index in range(blocks_per_stage):
                step = stride if index == 0 else 1
                blocks.append(HybridBlock(cin, width, hw, step, generator, **tri))
                hw, cin = _out_hw(hw, step), width
                if attention == "every_block":
                    attentions.append(NoisyAttention(cin, attention_noise))
        if attention == "last":
            attentions.append(NoisyAttention(cin, attention_noise))
        self.blocks = nn.Sequential(*blocks)
        self.attentions = nn.ModuleList(attentions)  # a residual attention after each of the last len(...) blocks
        self.head = SNLinear(cin * hw[0] * hw[1], num_classes)

    def features(self, x: Tensor) -> Tensor:
        a = self.stem_act(self.stem(x))
        first = len(self.blocks) - len(self.attentions)  # the first block an attention follows
        for index, block in enumerate(self.blocks):
            a = block(a)
            if index >= first:
                a = a + self.attentions[index - first](a)
        return a

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.features(x).flatten(1))


class PlainCNN(nn.Module):
    """Baseline with the same widths/strides and conv count: conv-ReLU stem, two conv-ReLU per block, linear head."""

    def __init__(
        self,
        in_channels: int,
        image_hw: tuple[int, int],
        num_classes: int,
        widths: tuple[int, ...] = (16, 32),
        strides: tuple[int, ...] = (1, 2),
        blocks_per_stage: int = 1,
    ):
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(in_channels, widths[0], 3, padding=1), nn.ReLU()]
        hw, cin = image_hw, widths[0]
        for width, stride in zip(widths, strides, strict=True):
            for index in range(blocks_per_stage):
                step = stride if index == 0 else 1
                layers += [nn.Conv2d(cin, width, 3, step, 1), nn.ReLU(), nn.Conv2d(width, width, 3, 1, 1), nn.ReLU()]
                hw, cin = _out_hw(hw, step), width
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(cin * hw[0] * hw[1], num_classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.body(x).flatten(1))


DETERMINISTIC_LINEAR = (SNConv2d, SNLinear, FrozenRPConv2d, FreqRPConv, TriBranchConv)


def layer_norms(model: nn.Module, iters: int = 100) -> dict[str, float]:
    """Operator norm of every deterministic linear layer (each branch, each assembled tri-branch layer, the head),
    measured by power iteration on the layer as assembled, stochastic elements off, eval mode."""
    was_training = model.training
    model.eval()
    set_stochastic(model, False)
    try:
        return {
            name: operator_norm(module, module.in_shape, iters)
            for name, module in model.named_modules()
            if isinstance(module, DETERMINISTIC_LINEAR)
        }
    finally:
        set_stochastic(model, True)
        model.train(was_training)


def lipschitz_ratio(model: nn.Module, x: Tensor, pairs: int = 256, seed: int = 0) -> float:
    """Largest ‖f(a) − f(b)‖ / ‖a − b‖ of the deterministic model over random pairs: half are two data points,
    half a data point and a Gaussian perturbation of it with norm log-uniform in [1e-3, 1]. x: (N, C, H, W)."""
    generator = torch.Generator().manual_seed(seed)
    half = pairs // 2
    i = torch.randint(0, len(x), (pairs,), generator=generator)
    j = torch.randint(0, len(x), (half,), generator=generator)
    delta = torch.randn((pairs - half, *x.shape[1:]), generator=generator)
    radius = 10 ** (-3 * torch.rand(pairs - half, generator=generator))
    delta = delta * (radius / delta.flatten(1).norm(dim=1)).view(-1, *([1] * (x.dim() - 1)))
    a = x[i]
    b = torch.cat([x[j], a[half:] + delta])
    keep = (a - b).flatten(1).norm(dim=1) > 1e-6
    was_training = model.training
    model.eval()
    set_stochastic(model, False)
    try:
        with torch.no_grad():
            num = (model(a[keep]) - model(b[keep])).norm(dim=1)
        den = (a[keep] - b[keep]).flatten(1).norm(dim=1)
        return float((num / den).max())
    finally:
        set_stochastic(model, True)
        model.train(was_training)
