"""Training, the EPE evaluation at integer and fractional query times, and the cost of a query vs an encode.

Training queries are integer: for each clip of a batch, `queries` random (frame i, time τ) pairs with
τ ∈ {0, …, T − 1} decoded from one encoding. Evaluation on held-out clips:
- `epe_integer`: mean 3D end-point error over every (i, τ) integer pair with τ ≠ i;
- `epe_fractional`: over every i and τ = k + ½ (never trained on), against the analytic trajectories;
- `epe_by_offset`: the error against |τ − t_i| (½, 1, 1½, …);
- `epe_dynamic`: as `epe_integer`, on pixels of moving spheres only.
Costs: floating-point operations counted by torch's `FlopCounterMode` for one encode of a clip and for one
query on its latent (deterministic), and the median wall time of each (evidence only).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from raygent.jobs.four_rc.model import FourRC, epe_loss
from raygent.jobs.four_rc.scenes import Clips


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int
    queries: int
    lr: float


def train(model: FourRC, clips: Clips, settings: TrainSettings, seed: int) -> list[float]:
    """Adam on `epe_loss`; returns the loss of every 50th step."""
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=settings.lr, total_steps=settings.steps,
                                                   pct_start=0.1)
    video = torch.from_numpy(clips.video)
    losses = []
    frames = clips.frames
    for step in range(settings.steps):
        index = torch.randint(len(clips), (settings.batch_size,), generator=generator).numpy()
        latent = model.encode(video[index])
        rows = np.repeat(index, settings.queries)
        frame = rng.integers(frames, size=rows.size)
        tau = rng.integers(frames, size=rows.size).astype(np.float64)
        sub = _subset(clips, rows)
        target = torch.from_numpy(sub.target(frame, tau))
        base_target = torch.from_numpy(sub.points[np.arange(rows.size), frame])
        points, base = model.query(latent.repeat(settings.queries), torch.from_numpy(frame),
                                   torch.from_numpy(tau).float())
        loss = epe_loss(points, base, target, base_target)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 50 == 0:
            losses.append(float(loss.detach()))
    return losses


def _subset(clips: Clips, rows: np.ndarray) -> Clips:
    return Clips(video=clips.video[rows], points=clips.points[rows], owner=clips.owner[rows], c0=clips.c0[rows],
                 velocity=clips.velocity[rows], amplitude=clips.amplitude[rows], omega=clips.omega[rows],
                 phase=clips.phase[rows], present=clips.present[rows])


@torch.no_grad()
def evaluate(model: FourRC, clips: Clips) -> dict[str, float | dict[str, float]]:
    """The EPE metrics of the module docstring on `clips`."""
    model.eval()
    latent = model.encode(torch.from_numpy(clips.video))
    frames = clips.frames
    n = len(clips)
    by_offset: dict[float, list[float]] = {}
    integer, fractional, dynamic = [], [], []
    for i in range(frames):
        taus = [float(t) for t in range(frames) if t != i] + [k + 0.5 for k in range(frames - 1)]
        for tau in taus:
            frame = np.full(n, i)
            points, _ = model.query(latent, torch.from_numpy(frame), torch.full((n,), tau))
            error = np.linalg.norm(points.numpy() - clips.target(frame, np.full(n, tau)), axis=-1)
            by_offset.setdefault(abs(tau - i), []).append(float(error.mean()))
            if tau == int(tau):
                integer.append(float(error.mean()))
                moving = clips.owner[:, i] >= 0
                dynamic.append(float(error[moving].mean()))
            else:
                fractional.append(float(error.mean()))
    model.train()
    return {
        "epe_integer": float(np.mean(integer)),
        "epe_fractional": float(np.mean(fractional)),
        "epe_dynamic": float(np.mean(dynamic)),
        "epe_by_offset": {f"{offset:g}": float(np.mean(values)) for offset, values in sorted(by_offset.items())},
    }


def _flops(fn: object) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()  # type: ignore[operator]
    return int(counter.get_total_flops())


@torch.no_grad()
def costs(model: FourRC, clip: np.ndarray, repeats: int = 20) -> dict[str, float]:
    """FLOPs and median wall seconds of one encode of `clip` (1, T, 6, H, W) and of one query on its latent."""
    model.eval()
    video = torch.from_numpy(clip)
    latent = model.encode(video)
    frame, tau = torch.zeros(1, dtype=torch.long), torch.full((1,), 1.5)
    model.train()  # counted on the plain path: the eval-mode fused encoder kernel escapes the FLOP counter
    encode_flops = _flops(lambda: model.encode(video))
    query_flops = _flops(lambda: model.query(latent, frame, tau))
    model.eval()

    def median_seconds(fn: object) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    encode_seconds = median_seconds(lambda: model.encode(video))
    query_seconds = median_seconds(lambda: model.query(latent, frame, tau))
    model.train()
    return {"encode_flops": encode_flops, "query_flops": query_flops, "encode_seconds": encode_seconds,
            "query_seconds": query_seconds}
