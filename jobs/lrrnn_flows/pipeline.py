"""One trial of the study: data -> point estimate -> max-entropy distribution -> sampled networks -> metrics.

The pipeline is the method notes' reconstruction [rec] (docs/studies.md): fit, gauge-fix, identifiable
projection, max-entropy residual resampling weighted by lambda, flow matching on the result
(``objective="pipeline"``). ``objective="direct"`` swaps the last two steps for direct entropy maximisation
under a dynamics penalty (`direct.py`), which may be closer to the paper's own formulation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from raygent.jobs.lrrnn_flows import dynamics as dyn
from raygent.jobs.lrrnn_flows.fit import (
    Projection,
    fit_lrrnn,
    gauge_fix,
    identifiable_projection,
    latents,
    maxent_residuals,
    rollout,
)
from raygent.jobs.lrrnn_flows.flow import Flow, train_flow_matching
from raygent.jobs.lrrnn_flows.ground_truth import (
    GroundTruth,
    initial_latents,
    make_ground_truth,
    simulate_network,
    simulate_trials,
)
from raygent.jobs.lrrnn_flows.recordings import load_recording

NAN = float("nan")


class Sampler(Protocol):
    """A learned connectivity distribution over (m, n) in the point estimate's gauge."""

    def sample(self, n_neurons: int, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]: ...

    def entropy(self, generator: torch.Generator) -> float: ...


@dataclass
class JointFlowSampler:
    """The pipeline's CNF over z = (m, n) in R^{2R}, or over (m, r) with n = g(m) + r if `shear` is given.

    The shear (m, n) -> (m, n - g(m)) has unit Jacobian, so both coordinates describe the same density
    over loadings and the same entropy; residual coordinates only make the flow's job easier.
    """

    flow: Flow
    rank: int
    shear: Projection | None = None
    entropy_samples: int = 1000

    def sample(self, n_neurons: int, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
        z = self.flow.sample(n_neurons, generator).double().numpy()
        m, second = z[:, : self.rank], z[:, self.rank :]
        return m, second if self.shear is None else self.shear(m) + second

    def entropy(self, generator: torch.Generator) -> float:
        return self.flow.entropy(self.entropy_samples, generator)


@dataclass
class TrialData:
    """Training and held-out activity (trials, time, N), bin width, and the ground truth if synthetic."""

    train: np.ndarray
    test: np.ndarray
    dt: float
    gt: GroundTruth | None


def prepare_data(p: Any, rng: np.random.Generator) -> TrialData:
    """Synthetic trials of the named case, or a recording from `p.data_path` (split 80/20 by trial)."""
    if p.case == "recorded":
        rec = load_recording(p.data_path, default_dt=p.dt, zscore=p.zscore_recording)
        order = rng.permutation(rec.activity.shape[0])
        cut = max(1, round(0.8 * len(order)))
        return TrialData(rec.activity[order[:cut]], rec.activity[order[cut:]], rec.dt, None)
    gt = make_ground_truth(p.case, p.n_neurons, rng)
    kw = dict(sigma_latent=p.sigma_latent, sigma_private=p.sigma_private, sigma_obs=p.sigma_obs)
    train = simulate_trials(gt, p.n_trials, p.n_steps, p.dt, rng, **kw)
    test = simulate_trials(gt, max(p.n_trials // 4, 2), p.n_steps, p.dt, rng, **kw)
    return TrialData(train, test, p.dt, gt)


def heldout_mse(m: np.ndarray, n: np.ndarray, x: np.ndarray, dt: float, window: int) -> float:
    """Normalised `window`-step prediction error on held-out trials x (trials, T, N)."""
    starts = np.arange(0, x.shape[1] - window, max(window // 2, 1))
    segs = np.concatenate([x[:, s : s + window + 1] for s in starts], axis=0)
    with torch.no_grad():
        pred = rollout(torch.tensor(m), torch.tensor(n), torch.tensor(segs[:, 0]), window, dt).numpy()
    return float(((pred - segs[:, 1:]) ** 2).mean() / (segs[:, 1:] ** 2).mean())


def fidelity_mse(m: np.ndarray, n: np.ndarray, gt: GroundTruth, dt: float, n_steps: int, seed: int) -> float:
    """Noise-free trajectories of the fit vs the ground truth from fresh initial states (normalised MSE)."""
    rng = np.random.default_rng(seed + 7919)
    x0 = initial_latents(gt.case, gt.rank, 16, rng) @ gt.m.T
    ref = simulate_network(gt.m, gt.n, x0, n_steps, dt)
    fit = simulate_network(m, n, x0, n_steps, dt)
    return float(((fit - ref) ** 2).mean() / (ref**2).mean())


def network_dynamics(m: np.ndarray, n: np.ndarray, case: str, radius: float) -> dict[str, float]:
    """Stable fixed points (not for rings); period (limit cycles, rank >= 2) of one network."""
    rank = m.shape[1]
    fixed = case != "ring" or rank != 2
    return {
        "stable_fp": float(dyn.find_fixed_points(m, n, radius=radius).n_stable) if fixed else NAN,
        "period": dyn.limit_cycle_period(m, n) if rank >= 2 and case in ("limit_cycle", "recorded") else NAN,
    }


def ring_stats(m: np.ndarray, n: np.ndarray, case: str) -> dict[str, float]:
    """Ring drift (degrees over 10 tau) and radius, for rank-2 ring (or recorded) networks; else NaN."""
    if m.shape[1] != 2 or case not in ("ring", "recorded"):
        return {"ring_drift_deg": NAN, "ring_radius": NAN}
    ring = dyn.ring_drift(m, n)
    return {"ring_drift_deg": ring.drift_deg, "ring_radius": ring.radius}


def latent_mse(m_ref: np.ndarray, n_ref: np.ndarray, m: np.ndarray, n: np.ndarray, starts: np.ndarray) -> float:
    """Latent trajectories (4 tau) of a sampled network vs the point estimate, same gauge (normalised MSE)."""
    ref = dyn.simulate_latent(m_ref, n_ref, starts, 0.1, 40)
    got = dyn.simulate_latent(m, n, starts, 0.1, 40)
    return float(((got - ref) ** 2).mean() / (ref**2).mean())


HIST_BINS = np.linspace(-3.0, 3.0, 13)


def residual_histogram(prefix: str, residual: np.ndarray) -> dict[str, float]:
    """Density histogram of the standardised residual along its first principal axis, one column per bin."""
    centred = residual - residual.mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    proj = centred @ axis
    density, _ = np.histogram(proj / proj.std(), bins=HIST_BINS, density=True)
    return {f"hist/{prefix}_{i:02d}": float(d) for i, d in enumerate(density)}


def learn_pipeline(
    p: Any, m: np.ndarray, n: np.ndarray, g: Projection, rng: np.random.Generator, gen: torch.Generator
) -> tuple[Sampler, np.ndarray]:
    """Max-ent residual resampling with weight lambda, then a joint CNF by flow matching; also returns r~.

    `flow_coordinates`: "loadings" trains on (m, g(m) + r~) as the notes write it; "residual" on (m, r~).
    """
    resampled = maxent_residuals(n - g(m), p.entropy_weight, p.resample_copies, rng)
    second = resampled if p.flow_coordinates == "residual" else g(m)[None] + resampled
    data = np.concatenate([np.broadcast_to(m, second.shape), second], axis=-1).reshape(-1, 2 * m.shape[1])
    flow = train_flow_matching(data, gen, iters=p.flow_iters, batch=p.flow_batch, lr=p.flow_lr, hidden=p.flow_hidden)
    shear = g if p.flow_coordinates == "residual" else None
    return JointFlowSampler(flow, m.shape[1], shear), resampled[0]


def run_trial(p: Any, report: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """All stages of one trial; calls `report` once after the fit, returns the final metrics."""
    clock = time.process_time()
    rng = np.random.default_rng(p.seed)
    gen = torch.Generator().manual_seed(p.seed)
    data = prepare_data(p, rng)
    gt = data.gt
    base_rank = p.rank or (gt.rank if gt is not None else 0)
    rank = base_rank + p.rank_offset
    if rank < 0 or base_rank == 0:
        raise ValueError(f"effective rank must be >= 0 (rank={p.rank}, rank_offset={p.rank_offset})")
    out: dict[str, Any] = {"gt/rank": gt.rank if gt else NAN, "fit/rank": rank}
    size = data.train.shape[-1]
    if rank == 0:  # the no-recurrence baseline that anchors the low side of the rank elbow
        m = n = np.zeros((size, 0))
        out["fit/final_loss"] = NAN
    else:
        start = (gt.m, gt.n) if gt is not None and p.fit_init == "warm" else None
        init = "warm" if start is not None else "random"
        res = fit_lrrnn(
            data.train, rank, data.dt, rng, init=init, start=start, warm_noise=p.warm_noise,
            iters=p.fit_iters, window=p.fit_window, batch=p.fit_batch, lr=p.fit_lr,
        )
        m, n = gauge_fix(res.m, res.n, data.train)
        out["fit/final_loss"] = float(np.mean(res.losses[-20:]))
    out["fit/heldout_mse"] = heldout_mse(m, n, data.test, data.dt, p.fit_window)
    out["fit/fidelity_mse"] = fidelity_mse(m, n, gt, data.dt, p.fidelity_steps, p.seed) if gt else NAN
    out["time/fit_s"] = time.process_time() - clock
    report(dict(out))
    if rank == 0:
        return out

    visited = latents(data.train.reshape(-1, size), m)
    radius = float(1.25 * np.quantile(np.abs(visited), 0.99))
    g = identifiable_projection(m, n, visited, p.n_features, rng)
    out["point/residual_ks_p"] = dyn.residual_ks_p(n - g(m))
    out.update(residual_histogram("point", n - g(m)))
    out["point/m_kurtosis"] = dyn.kurtosis(m[:, 0])
    if gt is not None:
        out["gt/m_kurtosis"] = dyn.kurtosis(gt.m[:, 0])
        gt_visited = latents(data.train.reshape(-1, size), gt.m)
        gt_dyn = network_dynamics(gt.m, gt.n, p.case, float(1.25 * np.quantile(np.abs(gt_visited), 0.99)))
        gt_dyn.update(ring_stats(gt.m, gt.n, p.case))
        out.update({f"gt/{k}": v for k, v in gt_dyn.items()})
        iid = rng.integers(0, gt.n_neurons, size=p.n_ring_neurons)
        out["iid/ring_drift_deg"] = ring_stats(gt.m[iid], gt.n[iid], p.case)["ring_drift_deg"]
    fit_dyn = network_dynamics(m, n, p.case, radius)
    fit_dyn.update(ring_stats(m, n, p.case))
    if rank == 2 and p.case in ("ring", "recorded"):  # the drift noise floor of a perfect sampler at N'
        source = (gt.m, gt.n) if gt is not None else (m, n)
        null = dyn.resampled_ring_drift(*source, p.n_ring_neurons, p.ring_null_draws,
                                        np.random.default_rng([p.seed, 4242]))
        out["null/ring_drift_deg"], out["null/ring_drift_sd"] = float(null.mean()), float(null.std(ddof=1))
    out.update({f"fit/{k}": v for k, v in fit_dyn.items()})

    clock_flow = time.process_time()
    if p.objective == "pipeline":
        sampler, resampled = learn_pipeline(p, m, n, g, rng, gen)
        out["data/residual_ks_p"] = dyn.residual_ks_p(resampled)
    else:
        from raygent.jobs.lrrnn_flows.direct import learn_direct

        sampler = learn_direct(p, m, n, visited, g, rng, gen)
    out["time/flow_s"] = time.process_time() - clock_flow
    out["flow/entropy"] = sampler.entropy(gen)

    m_ks, n_ks = sampler.sample(size, gen)
    out["flow/residual_ks_p"] = dyn.residual_ks_p(n_ks - g(m_ks))
    out.update(residual_histogram("flow", n_ks - g(m_ks)))
    reference = out.get("gt/stable_fp", fit_dyn["stable_fp"])
    starts = visited[rng.choice(visited.shape[0], size=16, replace=False)]
    nets, pooled_m = [], []
    needs_ring = rank == 2 and p.case in ("ring", "recorded")
    for _ in range(p.n_sample_nets):
        ms, ns = sampler.sample(p.n_sample_neurons, gen)
        pooled_m.append(ms[:, 0])
        stats = network_dynamics(ms, ns, p.case, radius)
        stats["latent_mse"] = latent_mse(m, n, ms, ns, starts)
        ring_net = sampler.sample(p.n_ring_neurons, gen) if needs_ring else (ms, ns)
        stats.update(ring_stats(*ring_net, p.case))
        nets.append(stats)
    for key in nets[0]:
        out[f"sampled/{key}"] = float(np.nanmean([s[key] for s in nets])) if any(
            np.isfinite(s[key]) for s in nets) else NAN
    out["sampled/stable_fp_match"] = float(np.mean([s["stable_fp"] == reference for s in nets]))
    ref_period = out.get("gt/period", fit_dyn["period"])
    errors = [abs(s["period"] - ref_period) / ref_period if np.isfinite(s["period"]) else 1.0 for s in nets]
    out["sampled/period_rel_err"] = float(np.mean(errors)) if np.isfinite(ref_period) else NAN  # no cycle = 100%
    out["flow/m_kurtosis"] = dyn.kurtosis(np.concatenate(pooled_m))
    out["time/total_s"] = time.process_time() - clock
    return out
