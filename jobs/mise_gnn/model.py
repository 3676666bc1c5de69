"""Dual-head MeshGraphNet (encode-process-decode) and its two losses.

Backbone after Pfaff et al. (2021): node and edge MLP encoders, L processor blocks
(e' = e + MLP(e, h_src, h_dst); h' = h + MLP(h, Σ_in e')), then two decoders on the final h: the field û
and a non-negative (softplus) node-wise error indicator ê. Message passing is plain `index_add_` on a
disjoint union of meshes, so no torch-scatter is needed. Every edge gets a learned embedding of its type
(mesh, node→pivot at scale s, pivot→parent at scale s, random), added to its encoded geometry; the paper's
option of separate processor MLPs for augmented edges is left out (one shared processor).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from raygent.jobs.mise_gnn.augment import NUM_EDGE_TYPES

EDGE_GEOMETRY = 3  # (dx, dy, |d|)


@dataclass
class GraphBatch:
    """A disjoint union of meshes. x (N, F); edge_index (2, E) src→dst, both directions present;
    edge_attr (E, 3); edge_type (E,); graph (N,) mesh id of every node; target (N, C)."""

    x: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    edge_type: torch.Tensor
    graph: torch.Tensor
    target: torch.Tensor

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
    the same function as the concatenated form, with the node projections done once per node."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.edge_in = nn.Linear(hidden, hidden)
        self.node_in = nn.Linear(hidden, 2 * hidden, bias=False)
        self.edge_out = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.LayerNorm(hidden))
        self.node_mlp = mlp(2 * hidden, hidden, hidden)

    def forward(self, h: torch.Tensor, e: torch.Tensor, edge_index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """h (N, H), e (E, H), edge_index (2, E) → updated (h, e)."""
        src, dst = edge_index
        from_src, from_dst = self.node_in(h).chunk(2, dim=1)
        e = e + self.edge_out(self.edge_in(e) + from_src.index_select(0, src) + from_dst.index_select(0, dst))
        incoming = torch.zeros_like(h).index_add_(0, dst, e)
        h = h + self.node_mlp(torch.cat([h, incoming], dim=1))
        return h, e


class DualHeadMeshGNN(nn.Module):
    """Encode-process-decode GNN with a field head (N, C) and an error-indicator head (N,)."""

    def __init__(self, node_features: int, out_channels: int, hidden: int = 48, layers: int = 4) -> None:
        super().__init__()
        self.node_encoder = mlp(node_features, hidden, hidden)
        self.edge_encoder = mlp(EDGE_GEOMETRY, hidden, hidden)
        self.edge_type = nn.Embedding(NUM_EDGE_TYPES, hidden)
        self.blocks = nn.ModuleList(ProcessorBlock(hidden) for _ in range(layers))
        self.field_head = mlp(hidden, hidden, out_channels, norm=False)
        self.error_head = mlp(hidden, hidden, 1, norm=False)

    def forward(self, batch: GraphBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """→ field (N, C), error indicator (N,) ≥ 0."""
        h = self.node_encoder(batch.x)
        e = self.edge_encoder(batch.edge_attr) + self.edge_type(batch.edge_type)
        for block in self.blocks:
            h, e = block(h, e, batch.edge_index)
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
