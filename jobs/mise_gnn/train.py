"""Training and evaluation of the dual-head surrogate with periodically rebuilt augmented graphs.

Schedule: every mesh starts on its plain graph; every `refresh_every` epochs the current model predicts
ê on each training mesh's current graph, and the augmentation is rebuilt from it (MiSe tree, or the same
number of random edges, or nothing for plain). At test time the same refresh is iterated `eval_rounds`
times from the plain graph, then the field and ê are scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from raygent.jobs.mise_gnn.augment import MESH, PivotTree, build_pivot_tree, mise_edges, random_edges
from raygent.jobs.mise_gnn.data import MeshSample
from raygent.jobs.mise_gnn.metrics import AUG_EDGES, EDGES, REL_L2, SPEARMAN, relative_l2, spearman
from raygent.jobs.mise_gnn.model import Aggregation, DualHeadMeshGNN, GraphBatch, field_loss, indicator_loss, node_error

Method = Literal["plain", "random", "mise"]


@dataclass(frozen=True)
class TrainSettings:
    """Everything the training loop reads."""

    method: Method = "mise"
    fraction: float = 0.05
    num_scales: int = 3
    pivot_spacing: float = 0.25
    hidden: int = 32
    layers: int = 4
    aggregation: Aggregation = "sum"
    separate_aug: bool = False
    epochs: int = 40
    batch_size: int = 8
    lr: float = 3e-3
    refresh_every: int = 5
    beta: float = 0.1
    log_target: bool = True
    eval_rounds: int = 2
    seed: int = 0


@dataclass(frozen=True)
class Normalizer:
    """Per-column affine normalisation fitted on the training meshes."""

    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def fit(cls, arrays: Sequence[np.ndarray]) -> Normalizer:
        stacked = np.concatenate(arrays)
        return cls(stacked.mean(axis=0), np.maximum(stacked.std(axis=0), 1e-6))

    def __call__(self, array: np.ndarray) -> np.ndarray:
        return ((array - self.mean) / self.std).astype(np.float32)


@dataclass
class MeshGraph:
    """One mesh ready for message passing: static tensors plus the current augmentation."""

    points: np.ndarray  # (N, 2) scaled to the unit box
    mesh_edges: np.ndarray  # (E, 2) undirected
    x: torch.Tensor
    target: torch.Tensor
    tree: PivotTree | None
    aug_edges: np.ndarray = field(default_factory=lambda: np.empty((0, 2), dtype=np.int64))
    aug_types: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    edge_index: torch.Tensor = field(init=False)
    edge_attr: torch.Tensor = field(init=False)
    edge_type: torch.Tensor = field(init=False)

    def __post_init__(self) -> None:
        self.set_augmentation(self.aug_edges, self.aug_types)

    @property
    def num_edges(self) -> int:
        """Undirected edges, mesh plus augmented."""
        return len(self.mesh_edges) + len(self.aug_edges)

    def set_augmentation(self, edges: np.ndarray, types: np.ndarray) -> None:
        """Replace the augmented edges; directed edges are stored mesh first, then augmented."""
        self.aug_edges, self.aug_types = edges, types
        directed = np.concatenate([self.mesh_edges, self.mesh_edges[:, ::-1], edges, edges[:, ::-1]])
        kinds = np.concatenate([np.full(2 * len(self.mesh_edges), MESH, dtype=np.int64), types, types])
        delta = self.points[directed[:, 1]] - self.points[directed[:, 0]]
        geometry = np.column_stack([delta, np.linalg.norm(delta, axis=1)])
        self.edge_index = torch.as_tensor(directed.T.copy(), dtype=torch.long)
        self.edge_attr = torch.as_tensor(geometry, dtype=torch.float32)
        self.edge_type = torch.as_tensor(kinds, dtype=torch.long)


def make_graphs(samples: Sequence[MeshSample], features: Normalizer, targets: Normalizer,
                settings: TrainSettings) -> list[MeshGraph]:
    graphs = []
    for sample in samples:
        low = sample.points.min(axis=0)
        points = (sample.points - low) / max(float((sample.points.max(axis=0) - low).max()), 1e-12)
        tree = None
        if settings.method != "plain":
            tree = build_pivot_tree(points, settings.num_scales, settings.pivot_spacing)
        graphs.append(MeshGraph(points, sample.edges, torch.as_tensor(features(sample.features)),
                                torch.as_tensor(targets(sample.target)), tree))
    return graphs


def collate(graphs: Sequence[MeshGraph]) -> GraphBatch:
    """Disjoint union of `graphs`: node offsets applied, all mesh edges first, then all augmented edges."""
    offsets = np.cumsum([0] + [len(g.points) for g in graphs[:-1]])
    mesh_spans = [2 * len(g.mesh_edges) for g in graphs]

    def edges(part: str) -> list[tuple[MeshGraph, slice, int]]:
        return [(g, slice(0, m) if part == "mesh" else slice(m, None), int(o))
                for g, m, o in zip(graphs, mesh_spans, offsets, strict=True)]

    order = edges("mesh") + edges("aug")
    return GraphBatch(
        x=torch.cat([g.x for g in graphs]),
        edge_index=torch.cat([g.edge_index[:, span] + o for g, span, o in order], dim=1),
        edge_attr=torch.cat([g.edge_attr[span] for g, span, _ in order]),
        edge_type=torch.cat([g.edge_type[span] for g, span, _ in order]),
        graph=torch.cat([torch.full((len(g.points),), i, dtype=torch.long) for i, g in enumerate(graphs)]),
        target=torch.cat([g.target for g in graphs]),
        num_mesh_edges=sum(mesh_spans),
    )


@torch.no_grad()
def predict(
    model: DualHeadMeshGNN, graphs: Sequence[MeshGraph], batch_size: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per mesh: (normalised field (N, C), error indicator (N,))."""
    model.eval()
    out: list[tuple[torch.Tensor, torch.Tensor]] = []
    for start in range(0, len(graphs), batch_size):
        chunk = graphs[start : start + batch_size]
        field_pred, indicator = model(collate(chunk))
        sizes = [len(g.points) for g in chunk]
        out.extend(zip(torch.split(field_pred, sizes), torch.split(indicator, sizes), strict=True))
    model.train()
    return [(f.numpy(), e.numpy()) for f, e in out]


def refresh(model: DualHeadMeshGNN, graphs: Sequence[MeshGraph], settings: TrainSettings, round_index: int,
            split: int) -> None:
    """Rebuild every graph's augmentation from the model's current ê on its current graph."""
    if settings.method == "plain":
        return
    predictions = predict(model, graphs, 4 * settings.batch_size)
    for index, (graph, (_, indicator)) in enumerate(zip(graphs, predictions, strict=True)):
        assert graph.tree is not None
        edges, types = mise_edges(graph.points, indicator, settings.fraction, graph.tree)
        if settings.method == "random":
            rng = np.random.default_rng([settings.seed, split, index, round_index])
            edges, types = random_edges(len(graph.points), len(edges), rng)
        graph.set_augmentation(edges, types)


def cosine_lr(base: float, step: int, total: int, floor: float = 0.05) -> float:
    """Cosine decay from `base` to `floor·base` over `total` steps."""
    progress = min(step, total) / max(total, 1)
    return base * (floor + (1 - floor) * 0.5 * (1 + np.cos(np.pi * progress)))


def train(model: DualHeadMeshGNN, graphs: list[MeshGraph], settings: TrainSettings,
          optimizer: torch.optim.Optimizer, start_epoch: int = 0,
          on_refresh: Callable[[int, float], None] | None = None) -> None:
    """Adam-style training with cosine decay from `start_epoch`; refreshes the graphs every P epochs and
    then calls `on_refresh(epochs_done, mean_loss_since_last_refresh)`."""
    steps_per_epoch = -(-len(graphs) // settings.batch_size)
    total = settings.epochs * steps_per_epoch
    generator = np.random.default_rng([settings.seed, 7])
    for _ in range(start_epoch):  # the same shuffling order after a resume
        generator.permutation(len(graphs))
    step = start_epoch * steps_per_epoch
    losses: list[float] = []
    for epoch in range(start_epoch, settings.epochs):
        order = generator.permutation(len(graphs))
        for start in range(0, len(graphs), settings.batch_size):
            batch = collate([graphs[i] for i in order[start : start + settings.batch_size]])
            field_pred, indicator = model(batch)
            loss = field_loss(field_pred, batch.target)
            loss = loss + settings.beta * indicator_loss(indicator, field_pred, batch.target, settings.log_target)
            for group in optimizer.param_groups:
                group["lr"] = cosine_lr(settings.lr, step, total)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            losses.append(float(loss.detach()))
        if (epoch + 1) % settings.refresh_every == 0 and epoch + 1 < settings.epochs:
            refresh(model, graphs, settings, round_index=(epoch + 1) // settings.refresh_every, split=0)
            if on_refresh is not None:
                on_refresh(epoch + 1, float(np.mean(losses)))
            losses = []


def evaluate(model: DualHeadMeshGNN, graphs: list[MeshGraph], targets: Normalizer,
             settings: TrainSettings) -> dict[str, float]:
    """Test metrics after `eval_rounds` refreshes from the plain graph (graphs are modified in place)."""
    for round_index in range(settings.eval_rounds):
        refresh(model, graphs, settings, round_index=round_index, split=1)
    rel, rank = [], []
    for graph, (field_pred, indicator) in zip(graphs, predict(model, graphs, 4 * settings.batch_size), strict=True):
        pred = field_pred * targets.std + targets.mean
        truth = graph.target.numpy() * targets.std + targets.mean
        rel.append(relative_l2(pred, truth))
        error = node_error(torch.as_tensor(field_pred), graph.target).numpy()
        rank.append(spearman(indicator, error))
    return {
        REL_L2: float(np.mean(rel)),
        SPEARMAN: float(np.mean(rank)),
        EDGES: float(np.mean([g.num_edges for g in graphs])),
        AUG_EDGES: float(np.mean([len(g.aug_edges) for g in graphs])),
    }
