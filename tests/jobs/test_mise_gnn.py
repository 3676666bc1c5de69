"""MiSe-GNN study: solvers, augmentation tree, random baseline, model, loader, config and the claim's shape."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from raygent.jobs.mise_gnn.augment import (
    MESH,
    RANDOM,
    build_pivot_tree,
    mise_edges,
    node_pivot_type,
    pivot_parent_type,
    random_edges,
    select_nodes,
)
from raygent.jobs.mise_gnn.data import generate, load_sample, load_split, save_split, synthetic_dataset
from raygent.jobs.mise_gnn.meshes import (
    lumped_mass,
    random_mesh,
    solve_advection_diffusion,
    solve_poisson,
    stiffness_matrix,
)
from raygent.jobs.mise_gnn.metrics import AUG_EDGES, EDGES, REL_L2, SPEARMAN, relative_l2, spearman
from raygent.jobs.mise_gnn.model import DualHeadMeshGNN, indicator_loss
from raygent.jobs.mise_gnn.study import MiseGnnStudy, MiseParams
from raygent.jobs.mise_gnn.train import Normalizer, TrainSettings, collate, make_graphs, refresh
from raygent.platform import session
from raygent.platform.config import load_config
from raygent.platform.session import grid_locally


def _manufactured_error(num_nodes: int, grading: float, insulated: bool) -> float:
    mesh = random_mesh(np.random.default_rng(5), num_nodes, grading=grading)
    x, y = mesh.points.T
    if insulated:  # ∂u/∂n = 0 on the square; Dirichlet data only on the hole
        exact = np.cos(np.pi * x) * np.cos(np.pi * y)
        source, fixed = 2 * np.pi**2 * exact, mesh.hole
    else:
        exact = np.sin(np.pi * x) * np.sin(np.pi * y) + x * y
        source, fixed = 2 * np.pi**2 * np.sin(np.pi * x) * np.sin(np.pi * y), mesh.boundary
    u = solve_poisson(mesh, source, np.where(fixed, exact, 0.0), fixed)
    return float(np.abs(u - exact).max())


@pytest.mark.parametrize(("grading", "insulated"), [(1.0, False), (0.5, False), (1.0, True)])
def test_poisson_solver_converges_at_second_order(grading: float, insulated: bool) -> None:
    errors = [_manufactured_error(n, grading, insulated) for n in (300, 1200, 4800)]
    assert errors[2] < 5e-3
    # halving h cuts the nodal error by about 4 for P1 elements
    assert errors[0] / errors[1] > 2.5 and errors[1] / errors[2] > 2.5


def test_stiffness_and_mass_are_consistent() -> None:
    mesh = random_mesh(np.random.default_rng(0), 300)
    stiffness = stiffness_matrix(mesh)
    assert np.allclose(stiffness @ np.ones(mesh.num_nodes), 0.0, atol=1e-10)  # constants have no energy
    assert np.allclose((stiffness - stiffness.T).toarray(), 0.0)
    x = mesh.points[:, 0]
    assert np.isclose(x @ stiffness @ x, lumped_mass(mesh).sum())  # ∫|∇x|² = area
    hole = mesh.points[mesh.hole]
    angle = np.arctan2(*(hole - hole.mean(axis=0)).T[::-1])
    ring = hole[np.argsort(angle)]
    polygon = 0.5 * abs(np.dot(ring[:, 0], np.roll(ring[:, 1], 1)) - np.dot(ring[:, 1], np.roll(ring[:, 0], 1)))
    assert np.isclose(lumped_mass(mesh).sum(), 1.0 - polygon)


def test_advection_diffusion_keeps_constants_and_bounds() -> None:
    mesh = random_mesh(np.random.default_rng(1), 300)
    velocity = np.tile([1.0, 0.2], (mesh.num_nodes, 1))
    inflow = mesh.outer & (mesh.points[:, 0] < 1e-9)
    ones = solve_advection_diffusion(mesh, velocity, 1e-3, np.ones(mesh.num_nodes), inflow)
    assert np.allclose(ones, 1.0)
    step = solve_advection_diffusion(mesh, velocity, 1e-2, (mesh.points[:, 1] > 0.5).astype(float), inflow)
    assert step.min() > -0.1 and step.max() < 1.1  # streamline diffusion: no large wiggles


def _tree_points() -> np.ndarray:
    return random_mesh(np.random.default_rng(2), 400, grading=0.5).points


def test_pivot_tree_is_nested() -> None:
    points = _tree_points()
    tree = build_pivot_tree(points, num_scales=3, base_spacing=0.25)
    assert [len(p) for p in tree.pivots] == [16, 4, 1]  # 4×4, 2×2, one root on the unit square
    for scale in range(2):
        assert set(tree.pivots[scale + 1]) <= set(tree.pivots[scale])
        assert set(tree.parent[scale]) == set(tree.pivots[scale + 1])
        # a coarse pivot is its own parent; the parent's cell contains the child's cell
        for child, parent in zip(tree.pivots[scale], tree.parent[scale], strict=True):
            if child in tree.pivots[scale + 1]:
                assert child == parent
            size = 0.25 * 2 ** (scale + 1)
            assert np.array_equal(
                np.minimum(points[child] // size, 1 / size - 1), np.minimum(points[parent] // size, 1 / size - 1)
            )


def test_mise_edges_link_every_selected_node_to_one_pivot_per_scale() -> None:
    points = _tree_points()
    tree = build_pivot_tree(points, num_scales=3, base_spacing=0.25)
    error = np.random.default_rng(0).random(len(points))
    edges, types = mise_edges(points, error, 0.05, tree)
    selected = select_nodes(error, 0.05)
    count = round(0.05 * len(points))
    assert len(selected) == count and set(selected) == set(np.argsort(-error)[:count])
    pairs = {tuple(e) for e in edges.tolist()}
    assert len(pairs) == len(edges) and all(a < b for a, b in pairs)
    expected: set[tuple[int, int]] = set()
    used = set()
    for scale in range(3):
        pivots = tree.pivots[scale]
        nearest = pivots[np.argmin(((points[selected, None] - points[pivots][None]) ** 2).sum(-1), axis=1)]
        for node, pivot in zip(selected, nearest, strict=True):
            assert node == pivot or (min(node, pivot), max(node, pivot)) in pairs  # one pivot at every scale
            expected.add((min(node, pivot), max(node, pivot)))
        if scale > 0:
            lookup = dict(zip(tree.pivots[scale - 1], tree.parent[scale - 1], strict=True))
            parents = {lookup[p] for p in used}
            expected |= {(min(p, lookup[p]), max(p, lookup[p])) for p in used}
            used = set(nearest) | parents
        else:
            used = set(nearest)
    expected = {e for e in expected if e[0] != e[1]}
    assert pairs == expected  # nothing else: the adaptive tree, no edges elsewhere
    kinds = set(types.tolist())
    assert kinds <= {node_pivot_type(s) for s in range(3)} | {pivot_parent_type(s) for s in range(2)}
    assert pivot_parent_type(0) in kinds and node_pivot_type(2) in kinds


def test_more_error_nodes_more_edges_and_random_matches_count() -> None:
    points = _tree_points()
    tree = build_pivot_tree(points, num_scales=2, base_spacing=0.25)
    error = np.random.default_rng(1).random(len(points))
    counts = [len(mise_edges(points, error, rho, tree)[0]) for rho in (0.02, 0.05, 0.2)]
    assert counts[0] < counts[1] < counts[2]
    edges, types = random_edges(len(points), counts[1], np.random.default_rng(0))
    assert len(edges) == counts[1] and len({tuple(e) for e in edges.tolist()}) == counts[1]
    assert np.all(edges[:, 0] < edges[:, 1]) and np.all(types == RANDOM)


def test_refresh_gives_random_the_same_edge_budget_as_mise() -> None:
    samples = generate("poisson", 3, 200, seed=0, grading=0.5)
    features = Normalizer.fit([s.features for s in samples])
    targets = Normalizer.fit([s.target for s in samples])
    torch.manual_seed(0)
    model = DualHeadMeshGNN(samples[0].features.shape[1], 1, hidden=8, layers=2)
    built = {}
    for method in ("mise", "random", "plain"):
        settings = TrainSettings(method=method, fraction=0.1, num_scales=3, hidden=8, layers=2)
        graphs = make_graphs(samples, features, targets, settings)
        refresh(model, graphs, settings, round_index=1, split=0)
        built[method] = graphs
    for mise, rand, plain in zip(built["mise"], built["random"], built["plain"], strict=True):
        assert len(mise.aug_edges) == len(rand.aug_edges) > 0
        assert mise.num_edges == rand.num_edges == plain.num_edges + len(mise.aug_edges)
        assert len(plain.aug_edges) == 0
        assert set(rand.aug_types.tolist()) == {RANDOM} and MESH not in set(mise.aug_types.tolist())


def test_message_passing_shapes_and_receptive_field() -> None:
    samples = generate("poisson", 2, 150, seed=1)
    features = Normalizer.fit([s.features for s in samples])
    targets = Normalizer.fit([s.target for s in samples])
    settings = TrainSettings(method="mise", fraction=0.1, num_scales=2, hidden=16, layers=2)
    graphs = make_graphs(samples, features, targets, settings)
    torch.manual_seed(0)
    model = DualHeadMeshGNN(features.mean.shape[0], 1, hidden=16, layers=2)
    batch = collate(graphs)
    field, indicator = model(batch)
    n = sum(len(g.points) for g in graphs)
    assert field.shape == (n, 1) and indicator.shape == (n,) and bool((indicator >= 0).all())
    assert batch.edge_index.shape[1] == 2 * sum(len(g.mesh_edges) for g in graphs)
    # two layers see two hops: a node three or more hops away from node 0 ignores it, until an edge joins them
    graph = graphs[0]
    hops = _hop_distance(graph.mesh_edges, len(graph.points), source=0)
    far = int(np.flatnonzero(hops >= 3)[0])
    assert _sensitivity(model, graph, far) == 0.0
    graph.set_augmentation(np.array([[0, far]]), np.array([RANDOM]))
    assert _sensitivity(model, graph, far) > 0.0
    # the disjoint union keeps meshes apart
    x = batch.x.clone()
    x[: len(graphs[0].points)] += 1.0
    moved, _ = model(dataclasses.replace(batch, x=x))
    assert torch.allclose(moved[len(graphs[0].points) :], field[len(graphs[0].points) :])


def _hop_distance(edges: np.ndarray, n: int, source: int) -> np.ndarray:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    adjacency = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    return shortest_path(adjacency, directed=False, unweighted=True, indices=source)


def _sensitivity(model: DualHeadMeshGNN, graph, node: int) -> float:
    batch = collate([graph])
    x = batch.x.clone().requires_grad_(True)
    field, _ = model(dataclasses.replace(batch, x=x))
    field[node].sum().backward()
    return float(x.grad[0].abs().sum())


def test_indicator_loss_regresses_stop_gradient_of_own_error() -> None:
    field = torch.tensor([[1.0], [2.0]], requires_grad=True)
    target = torch.tensor([[0.0], [2.5]])
    exact = torch.tensor([1.0, 0.5])
    assert float(indicator_loss(exact, field, target, log_target=False)) == 0.0
    indicator = torch.tensor([2.0, 0.5], requires_grad=True)
    loss = indicator_loss(indicator, field, target, log_target=False)
    assert np.isclose(float(loss.detach()), 0.5)  # ((2 − 1)² + 0²) / 2
    loss.backward()
    assert field.grad is None or float(field.grad.abs().sum()) == 0.0
    assert np.allclose(indicator.grad.numpy(), [1.0, 0.0])
    true_error = torch.tensor([1.0, 0.5])
    shifted = np.e * (true_error + 1e-3) - 1e-3  # one nat above the own error, in log space
    assert float(indicator_loss(shifted, field.detach(), target, log_target=True)) == pytest.approx(1.0, rel=1e-5)


def test_metrics_by_hand() -> None:
    assert relative_l2(np.array([[3.0], [4.0]]), np.array([[0.0], [5.0]])) == pytest.approx(np.sqrt(10) / 5)
    assert spearman(np.arange(5.0), np.arange(5.0) ** 3) == pytest.approx(1.0)
    assert spearman(np.arange(5.0), -np.arange(5.0)) == pytest.approx(-1.0)
    assert spearman(np.ones(4), np.arange(4.0)) == 0.0


def test_loader_round_trip_and_triangles(tmp_path: Path) -> None:
    samples = generate("advdiff", 3, 120, seed=4)
    save_split(samples, tmp_path / "train")
    loaded = load_split(tmp_path / "train")
    assert len(loaded) == 3
    for a, b in zip(samples, loaded, strict=True):
        for name in ("points", "edges", "features", "target"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
    mesh = random_mesh(np.random.default_rng(0), 100)
    np.savez(
        tmp_path / "tri.npz",
        points=mesh.points,
        triangles=mesh.triangles,
        features=np.zeros(mesh.num_nodes),
        target=np.ones(mesh.num_nodes),
    )
    sample = load_sample(tmp_path / "tri.npz")
    assert np.array_equal(sample.edges, mesh.edges()) and sample.features.shape == (mesh.num_nodes, 1)
    np.savez(tmp_path / "bad.npz", points=mesh.points, target=np.ones(mesh.num_nodes))
    with pytest.raises(ValueError, match="needs points"):
        load_sample(tmp_path / "bad.npz")


def test_cache_is_reused(tmp_path: Path) -> None:
    first = synthetic_dataset("poisson", 2, 1, 100, seed=3, cache_dir=tmp_path)
    (entry,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    again = synthetic_dataset("poisson", 2, 1, 100, seed=3, cache_dir=tmp_path)
    assert np.array_equal(first[0][1].target, again[0][1].target)
    assert len(list(tmp_path.iterdir())) == 1 and entry.is_dir()


TINY = {"num_nodes": 120, "num_train": 6, "num_test": 2, "hidden": 8, "epochs": 2, "refresh_every": 1, "batch_size": 3}


def test_trainable_reads_local_path_and_resumes(tmp_path: Path) -> None:
    samples = generate("poisson", 8, 120, seed=0)
    save_split(samples[:6], tmp_path / "data" / "train")
    save_split(samples[6:], tmp_path / "data" / "test")
    study = MiseGnnStudy()
    config = MiseParams(**TINY, data_path=str(tmp_path / "data"), scale="paper").model_dump()
    reports = session.run_locally(study.trainable, config)
    assert len(reports) == 2 and {REL_L2, SPEARMAN} <= set(reports[-1])
    with session._local_session() as interrupted:
        study.trainable(config)
    assert interrupted.state["epoch"] == 1  # the checkpoint taken at the refresh after epoch 1
    with session._local_session() as resumed:
        resumed.state = interrupted.state
        study.trainable(config)
    assert len(resumed.reports) == 1
    assert resumed.reports[-1][REL_L2] == pytest.approx(reports[-1][REL_L2], rel=1e-5)
    with pytest.raises(ValueError, match="data_path"):
        session.run_locally(study.trainable, MiseParams(**TINY, scale="paper").model_dump())


def test_config_validates() -> None:
    config = load_config("mise_gnn")
    assert config.entry.endswith(":MiseGnnStudy")
    space = config.sweep.space
    assert space["method"].grid == ["plain", "random", "mise"] and len(space["seed"].grid) >= 3
    assert MiseParams().rho in space["rho"].grid and MiseParams().num_scales in space["num_scales"].grid


_SHIFT = {(0.1, 2): 0.03, (0.1, 3): 0.01, (0.2, 2): -0.02, (0.2, 3): 0.0}  # per-cell offsets of augmented rows


def _table(rel: dict[str, list[float]], spearman_mise: float) -> pd.DataFrame:
    rows = []
    for method, values in rel.items():
        for seed, value in enumerate(values):
            for rho in (0.1, 0.2):
                for scales in (2, 3):
                    shift = 0.0 if method == "plain" else _SHIFT[rho, scales]
                    rows.append(
                        {
                            "trial_id": f"t{len(rows)}",
                            "status": "TERMINATED",
                            "iterations": 1,
                            **MiseParams(method=method, rho=rho, num_scales=scales, seed=seed).model_dump(),
                            REL_L2: value + shift,
                            SPEARMAN: spearman_mise if method == "mise" else 0.3,
                            EDGES: 1000.0 + 50 * (method != "plain"),
                            AUG_EDGES: 50.0 * (method != "plain"),
                        }
                    )
    return pd.DataFrame(rows)


def test_analyze_reads_the_default_cell_and_plot_writes_png(tmp_path: Path) -> None:
    study = MiseGnnStudy()
    shift = _SHIFT[MiseParams().rho, MiseParams().num_scales]  # analyze must read this cell only
    good = study.analyze(_table({"plain": [1.0, 1.0, 1.0], "random": [0.8, 0.8, 0.8], "mise": [0.7, 0.7, 0.7]}, 0.6))
    assert good.holds and all(good.checks.values())
    assert good.evidence["rel_l2_mean"]["mise"] == pytest.approx(0.7 + shift)
    assert good.evidence["gain_vs_plain"] == pytest.approx(0.3 - shift)
    worse_than_random = study.analyze(_table({"plain": [1.0] * 3, "random": [0.6] * 3, "mise": [0.7] * 3}, 0.6))
    assert not worse_than_random.holds and not worse_than_random.checks["mise_not_worse_than_random"]
    small_gain = study.analyze(_table({"plain": [1.0] * 3, "random": [0.95] * 3, "mise": [0.9] * 3}, 0.6))
    assert not small_gain.checks["mise_at_least_15pct_below_plain"]
    poor_indicator = study.analyze(_table({"plain": [1.0] * 3, "random": [0.8] * 3, "mise": [0.7] * 3}, 0.4))
    assert poor_indicator.checks == {**poor_indicator.checks, "mise_spearman_above_0.5": False}
    path = tmp_path / "curve.png"
    study.plot(_table({"plain": [1.0] * 3, "random": [0.8] * 3, "mise": [0.7] * 3}, 0.6), path)
    assert path.stat().st_size > 10_000 and path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_claim_shape_on_reduced_grid(tmp_path: Path) -> None:
    """Fewer meshes and epochs, default (rho, S), two seeds: the error-driven edges beat plain message passing
    and the same number of random edges, and the indicator ranks the true error (shape, not the 15% margin)."""
    study = MiseGnnStudy()
    fixed = {"num_train": 120, "num_test": 12, "epochs": 5, "cache_dir": str(tmp_path)}
    results = grid_locally(study, fixed, {"method": ["plain", "random", "mise"], "seed": [0, 1]})
    verdict = study.analyze(results)
    rel = verdict.evidence["rel_l2_mean"]
    assert rel["mise"] < rel["plain"] and rel["mise"] <= rel["random"], verdict.evidence
    assert verdict.checks["mise_spearman_above_0.5"], verdict.evidence
    assert verdict.evidence["aug_edges_mean"]["random"] == pytest.approx(
        verdict.evidence["aug_edges_mean"]["mise"], rel=0.1
    )
