"""Generated dynamic scenes rendered as short monocular RGB-D sequences, with 4D ground truth at any time [rec].

A clip: a static textured background plane and 2–4 spheres moving along smooth trajectories
c_o(t) = c0 + v t + a sin(ω t + φ) (t in frames, continuous), seen by a static pinhole camera (`size` × `size`,
focal length `size` pixels) for `frames` frames. Per frame the renderer ray-casts an RGB image, its depth and the
3D point of every pixel (camera = world frame). The input is RGB-D with known intrinsics, given to the model as RGB
plus the unprojected depth: at this scale learning monocular depth would dominate the error the claim is about
(motion), so the study leaves it out. The ground truth of a query (frame i, time τ) is where the surface point seen
at each pixel of frame i is at time τ: P_i^{t_i→τ} = P_i^{t_i} + c_o(τ) − c_o(t_i) for a pixel on sphere o (rigid
translation) and P_i^{t_i} for the background, known analytically at fractional τ too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BACKGROUND = -1
DEPTH_OFFSET = 3.5
CHANNELS = 6


@dataclass(frozen=True)
class Clips:
    """N clips: video (N, T, 6, H, W) float32 (RGB and the unprojected depth X, Y, Z − DEPTH_OFFSET: RGB-D with
    known intrinsics); points (N, T, H, W, 3) the 3D point per pixel at its own frame;
    owner (N, T, H, W) sphere index or BACKGROUND; trajectory parameters (N, S, 3) c0, v, a and (N, S, 1) ω, φ
    with a `present` (N, S) mask for clips with fewer spheres."""

    video: np.ndarray
    points: np.ndarray
    owner: np.ndarray
    c0: np.ndarray
    velocity: np.ndarray
    amplitude: np.ndarray
    omega: np.ndarray
    phase: np.ndarray
    present: np.ndarray

    def __len__(self) -> int:
        return int(self.video.shape[0])

    @property
    def frames(self) -> int:
        return int(self.video.shape[1])

    def centres(self, t: np.ndarray | float) -> np.ndarray:
        """(N, S, 3) sphere centres at time t (a scalar, or (N,) per clip)."""
        t = np.asarray(t, dtype=np.float64).reshape(-1, 1, 1) if np.ndim(t) else np.asarray(t)
        return self.c0 + self.velocity * t + self.amplitude * np.sin(self.omega * t + self.phase)

    def target(self, frame: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) ground truth P_i^{t_i → τ} for per-clip query frame i and time τ (both (N,))."""
        index = np.arange(len(self))
        base = self.points[index, frame]
        shift = self.centres(tau) - self.centres(frame.astype(np.float64))  # (N, S, 3)
        owner = self.owner[index, frame]
        moved = shift[index[:, None, None], np.maximum(owner, 0)]  # (N, H, W, 3)
        return (base + np.where((owner >= 0)[..., None], moved, 0.0)).astype(np.float32)


def _rays(size: int) -> np.ndarray:
    coords = (np.arange(size) + 0.5 - size / 2) / size
    u, v = np.meshgrid(coords, -coords)
    rays = np.stack([u, v, np.ones_like(u)], axis=-1)
    return rays / np.linalg.norm(rays, axis=-1, keepdims=True)


def make_clips(seed: int, count: int, frames: int, size: int, max_spheres: int = 4) -> Clips:
    """`count` clips, a function of the arguments only."""
    rng = np.random.default_rng(seed)
    rays = _rays(size)
    n_s = max_spheres
    c0 = np.stack([rng.uniform(-0.6, 0.6, (count, n_s)), rng.uniform(-0.6, 0.6, (count, n_s)),
                   rng.uniform(2.2, 3.4, (count, n_s))], axis=-1)
    velocity = rng.uniform(-0.12, 0.12, (count, n_s, 3)) * np.array([1.0, 1.0, 0.8])
    amplitude = rng.uniform(-0.2, 0.2, (count, n_s, 3)) * np.array([1.0, 1.0, 0.5])
    omega = rng.uniform(0.4, 1.0, (count, n_s, 1))
    phase = rng.uniform(0, 2 * np.pi, (count, n_s, 1))
    radius = rng.uniform(0.3, 0.5, (count, n_s))
    colour = rng.uniform(0.2, 1.0, (count, n_s, 3))
    present = np.arange(n_s)[None] < rng.integers(2, n_s + 1, count)[:, None]
    plane_z = rng.uniform(4.0, 5.0, count)
    plane_colours = rng.uniform(0.1, 0.9, (count, 2, 3))
    video = np.zeros((count, frames, CHANNELS, size, size), dtype=np.float32)
    points = np.zeros((count, frames, size, size, 3), dtype=np.float32)
    owner = np.full((count, frames, size, size), BACKGROUND, dtype=np.int8)
    for n in range(count):
        t_plane = plane_z[n] / rays[..., 2]
        plane_points = rays * t_plane[..., None]
        checker = ((np.floor(plane_points[..., 0] * 2.5) + np.floor(plane_points[..., 1] * 2.5)) % 2).astype(int)
        plane_rgb = plane_colours[n][checker]
        for f in range(frames):
            centres = c0[n] + velocity[n] * f + amplitude[n] * np.sin(omega[n] * f + phase[n])
            t_best = t_plane.copy()
            who = np.full(t_best.shape, BACKGROUND)
            for s in np.flatnonzero(present[n]):
                b = rays @ centres[s]
                disc = b**2 - (centres[s] @ centres[s] - radius[n, s] ** 2)
                t = np.where(disc >= 0, b - np.sqrt(np.maximum(disc, 0.0)), np.inf)
                closer = t < t_best
                t_best = np.where(closer, t, t_best)
                who = np.where(closer, s, who)
            hit = rays * t_best[..., None]
            rgb = plane_rgb * (0.6 + 0.4 * (plane_z[n] / t_best)[..., None] * (who < 0)[..., None])
            for s in np.flatnonzero(present[n]):
                on = who == s
                normal = (hit[on] - centres[s]) / radius[n, s]
                shade = 0.35 + 0.65 * np.clip(normal @ np.array([0.3, 0.5, -0.8]), 0.0, 1.0)
                rgb[on] = colour[n, s] * shade[:, None]
            video[n, f, :3] = rgb.transpose(2, 0, 1)
            video[n, f, 3:] = (hit - np.array([0.0, 0.0, DEPTH_OFFSET])).transpose(2, 0, 1)
            points[n, f] = hit
            owner[n, f] = who
    return Clips(video=video, points=points, owner=owner, c0=c0, velocity=velocity, amplitude=amplitude,
                 omega=omega, phase=phase, present=present)
