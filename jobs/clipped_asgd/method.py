"""The ClippedASGD server update: x ← x − γ·clip_c(g), clip_c(g) = min(1, c/‖g‖)·g.

Pure functions plus `ClippedStep`, a frozen picklable callable `update(x, g) -> x` that both the
event-driven simulator (`simulator.py`) and the Ray parameter server (`raygent.platform.parameter_server`)
apply, so the two execution modes run the identical rule. `clip = inf` is plain (unclipped) ASGD.

Differs from the paper only in scope: the paper also analyses decreasing steps and the heterogeneous
(federated) variant; here γ and c are constants, as in its constant-step homogeneous result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def clip(g: np.ndarray, c: float) -> np.ndarray:
    """min(1, c/‖g‖)·g for a gradient `g` of shape (d,); returns `g` unchanged when ‖g‖ ≤ c or c = inf.

    >>> clip(np.array([3.0, 4.0]), 1.0).tolist()
    [0.6, 0.8]
    """
    if c <= 0:
        raise ValueError(f"clip threshold must be > 0, got {c}")
    if math.isinf(c):
        return g
    norm = math.sqrt(float(g @ g))
    if norm <= c:
        return g
    return g * (c / norm)


def clipped_step(x: np.ndarray, g: np.ndarray, gamma: float, c: float) -> np.ndarray:
    """One server update x − γ·clip_c(g); `x`, `g` of shape (d,), returns a new array of shape (d,)."""
    return x - gamma * clip(g, c)


@dataclass(frozen=True)
class ClippedStep:
    """The picklable update rule `update(x, g) -> x` (pure) handed to the simulator or the server."""

    gamma: float
    clip: float = math.inf

    def __call__(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return clipped_step(x, g, self.gamma, self.clip)
