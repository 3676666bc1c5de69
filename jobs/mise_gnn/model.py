"""Dual-head MeshGraphNet (encode-process-decode) and its two losses.

Backbone after Pfaff et al. (2021): node and edge MLP encoders, L processor blocks
(e' = e + MLP(e, h_src, h_dst); h' = h + MLP(h, Σ_in e')), then two decoders on the final h: the field û
and a non-negative (softplus) node-wise error indicator ê. Message passing is plain `index_add_` on a
disjoint union of meshes, so no torch-scatter is needed. Every edge gets a learned embedding of its type
(mesh, node→pivot at scale s, pivot→parent at scale s, random), added to its encoded geometry; the paper's
option of separate processor MLPs for augmented edges is `separate_aug=True`. Messages are
summed as in MeshGraphNet; `aggregation="mean"` divides by the in-degree, which keeps the tree's hub
pivots (tens of incoming edges) on the same scale as ordinary mesh nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

from raygent.jobs.mise_gnn.augment import NUM_EDGE_TYPES

EDGE_GEOMETRY = 3  # (dx, dy, |d|)
Aggregation = Literal["sum", "mean"]


@dataclass
class GraphBatch:
    """A disjoint union of meshes. x (N, F); edge_index (2, E) src→dst, both directions present, the
    `num_mesh_edges` mesh edges first and the augmented edges after them; edge_attr (E, 3); edge_type (E,);
    graph (N,) mesh id of every node; target (N, C)."""

    x: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    edge_type: torch.Tensor
    graph: torch.Tensor
    target: torch.Tensor
    num_mesh_edges: int

    @property
    def num_graphs(self) -> int:
        return int(self.graph.max().item()) + 1 if self.graph.numel() else 0


def mlp(dim_in: int, hidden: int, dim_out: int, norm: bool = True) -> nn.Sequential:
    """Two-layer SiLU MLP, LayerNorm on the output when `norm` (as in MeshGraphNet)."""
    layers: list[nn.Module] = [nn.Linear(dim_in, hidden), nn.SiLU(), nn.Linear(hidden, dim_out)]
    if norm:
        layers.append(nn.LayerNorm(dim_out))
    return nn.Sequential(*layers)


class ProcessorBlock(nn.Module):
    """One residual message-passing step over edges and nodes.

    The edge MLP's first layer on [e, h_src, h_dst] is computed as W_e e + (W_s h)[src] + (W_d h)[dst]:
    the same function as the concatenated form, with the node projections done once per node. With
    `separate_aug`, augmented edges have their own edge MLP and their messages reach the node MLP through
    a channel of their own (the paper's optional augmented-edge processor)."""

    def __init__(self, hidden: int, aggregation: Aggregation = "sum", separate_aug: bool = False) -> None:
        super().__init__()
        self.aggregation = aggregation
        self.separate_aug = separate_aug
        self.edge_mlps = nn.ModuleList(_EdgeMLP(hidden) for _ in range(2 if separate_aug else 1))
        self.node_mlp = mlp((3 if separate_aug else 2) * hidden, hidden, hidden)

    def forward(self, h: torch.Tensor, e: torch.Tensor, edge_index: torch.Tensor,
                num_mesh_edges: int) -> tuple[torch.Tensor, torch.Tensor]:
        """h (N, H), e (E, H), edge_index (2, E) with mesh edges first → updated (h, e)."""
        if not self.separate_aug:
            e = e + self.edge_mlps[0](h, e, edge_index)
            return h + self.node_mlp(torch.cat([h, self._aggregate(h, e, edge_index[1])], dim=1)), e
        parts, channels = [], []
        for mlp_, span in zip(self.edge_mlps, (slice(0, num_mesh_edges), slice(num_mesh_edges, None)), strict=True):
            index = edge_index[:, span]
            part = e[span] + mlp_(h, e[span], index)
            parts.append(part)
            channels.append(self._aggregate(h, part, index[1]))
        return h + self.node_mlp(torch.cat([h, *channels], dim=1)), torch.cat(parts)

    def _aggregate(self, h: torch.Tensor, messages: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
        incoming = torch.zeros_like(h).index_add_(0, dst, messages)
        if self.aggregation == "mean":
            degree = torch.zeros(h.shape[0], dtype=h.dtype).index_add_(0, dst, torch.ones_like(dst, dtype=h.dtype))
            incoming = incoming / degree.clamp(min=1.0).unsqueeze(1)
        return incoming


class _EdgeMLP(nn.Module):
    """MLP(e, h_src, h_dst) → (E, H), with the node projections computed per node."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.edge_in = nn.Linear(hidden, hidden)
        self.node_in = nn.Linear(hidden, 2 * hidden, bias=False)
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.LayerNorm(hidden))

    def forward(self, h: torch.Tensor, e: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        from_src, from_dst = self.node_in(h).chunk(2, dim=1)
        return self.out(self.edge_in(e) + from_src.index_select(0, edge_index[0])
                        + from_dst.index_select(0, edge_index[1]))


class DualHeadMeshGNN(nn.Module):
    """Encode-process-decode GNN with a field head (N, C) and an error-indicator head (N,)."""

    def __init__(self, node_features: int, out_channels: int, hidden: int = 32, layers: int = 4,
                 aggregation: Aggregation = "sum", separate_aug: bool = False) -> None:
        super().__init__()
        self.node_encoder = mlp(node_features, hidden, hidden)
        self.edge_encoder = mlp(EDGE_GEOMETRY, hidden, hidden)
        self.edge_type = nn.Embedding(NUM_EDGE_TYPES, hidden)
        self.blocks = nn.ModuleList(ProcessorBlock(hidden, aggregation, separate_aug) for _ in range(layers))
        self.field_head = mlp(hidden, hidden, out_channels, norm=False)
        self.error_head = mlp(hidden, hidden, 1, norm=False)

    def forward(self, batch: GraphBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """→ field (N, C), error indicator (N,) ≥ 0."""
        h = self.node_encoder(batch.x)
        e = self.edge_encoder(batch.edge_attr) + self.edge_type(batch.edge_type)
        for block in self.blocks:
            h, e = block(h, e, batch.edge_index, batch.num_mesh_edges)
        return self.field_head(h), F.softplus(self.error_head(h)).squeeze(-1)


def node_error(field: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-node error ‖û_i − u_i‖₂ over channels: field, target (N, C) → (N,)."""
    return (field - target).norm(dim=-1)


def field_loss(field: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the field: (N, C), (N, C) → scalar."""
    return F.mse_loss(field, target)


def indicator_loss(indicator: torch.Tensor, field: torch.Tensor, target: torch.Tensor,
                   log_target: bool = True, eps: float = 1e-3) -> torch.Tensor:
    """The error head regresses the stop-gradient of the model's own error.

    indicator (N,), field (N, C), target (N, C) → scalar. `log_target` compares log(ê + eps) with
    log(sg(e) + eps) (the method notes' more stable form); False gives the plain ‖ê − sg(e)‖².
    """
    true_error = node_error(field.detach(), target)
    if log_target:
        return F.mse_loss(torch.log(indicator + eps), torch.log(true_error + eps))
    return F.mse_loss(indicator, true_error)
