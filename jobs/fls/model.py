"""The paper's two-layer ReLU network with feature-learning strength set by the initialisation scale.

f(x) = sum_j a_j ReLU(w_j . x), with w_j ~ N(0, alpha^2/d I) and a_j ~ N(0, alpha^2/m), so the output scale
at init is ~alpha^2 and the feature-learning strength is FLS ~ 1/alpha (small alpha: rich regime, neurons
align; large alpha: lazy/kernel regime). Trained on the logistic loss with hand-written full-batch
gradients in numpy (faster than torch at width 256 on one thread).

Differences from the paper: it analyses gradient *flow*; we run gradient descent, with the step divided by
max(1, alpha^2) by default (`lr_scaling: stable`) so that one step stays a small step of the same flow when
the kernel scale ~alpha^2 is large; `lr_scaling: none` gives plain GD at a fixed step. The participation-ratio
diagnostic is our choice of alignment measure [rec].
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from scipy.special import expit

from raygent.jobs.fls.descent import DescentModel

INIT_STREAM = 1
"""Second entry of the `np.random.default_rng([seed, stream])` key used for the initialisation."""


def logistic_loss(margins: np.ndarray) -> float:
    """Mean log(1 + exp(-margin)) over margins y_i f(x_i) of shape (n,); stable for large |margin|."""
    return float(np.mean(np.logaddexp(0.0, -margins)))


def zero_one_error(outputs: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of (n,) outputs whose sign (0 counted as -1) differs from the (n,) +/-1 labels."""
    return float(np.mean(np.where(outputs > 0, 1.0, -1.0) != labels))


def participation_ratio(vectors: np.ndarray) -> float:
    """(sum lambda)^2 / sum lambda^2 of the second-moment matrix V^T V of the rows of V (k, d).

    Equals r for r orthogonal rows of equal norm and 1 when all rows are parallel; in [1, min(k, d)].
    """
    gram = vectors.T @ vectors
    trace = float(np.trace(gram))
    if trace <= 0.0:
        return 0.0
    return trace**2 / float(np.sum(gram * gram))


def neuron_direction_pr(weights_in: np.ndarray, weights_out: np.ndarray) -> float:
    """Participation ratio of the unit neuron directions w_j/|w_j| (m, d), each scaled by |a_j| (m,)."""
    norms = np.linalg.norm(weights_in, axis=1, keepdims=True)
    directions = weights_in / np.where(norms > 0, norms, 1.0)
    return participation_ratio(np.abs(weights_out)[:, None] * directions)


def effective_lr(lr: float, alpha: float, lr_scaling: str) -> float:
    """The GD step: `lr`, divided by max(1, alpha^2) under 'stable' (the kernel scale grows as alpha^2)."""
    if lr_scaling == "stable":
        return lr / max(1.0, alpha**2)
    if lr_scaling == "none":
        return lr
    raise ValueError(f"unknown lr_scaling {lr_scaling!r} (expected 'stable' or 'none')")


class Network(DescentModel, Protocol):
    """What a trial needs of a network: the GD seam plus outputs and the alignment diagnostic."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        """(n, d) inputs to (n,) outputs."""
        ...

    def direction_pr(self) -> float:
        """Participation ratio of the (weighted) neuron directions."""
        ...


class TwoLayerReLU:
    """f(x) = sum_j a_j ReLU(w_j . x); weights `w` (m, d) and `a` (m,), trained on the logistic loss."""

    def __init__(self, w: np.ndarray, a: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
        self.w = np.array(w, dtype=np.float64)
        self.a = np.array(a, dtype=np.float64)
        self.x = x
        self.y = y

    @classmethod
    def init(cls, x: np.ndarray, y: np.ndarray, width: int, alpha: float, seed: int) -> TwoLayerReLU:
        """w ~ N(0, alpha^2/d I), a ~ N(0, alpha^2/m); the standard draws depend on the seed only, so
        trials at different alpha share the same directions (a paired comparison across alpha)."""
        d = x.shape[1]
        rng = np.random.default_rng([seed, INIT_STREAM])
        w = rng.standard_normal((width, d)) / np.sqrt(d)
        a = rng.standard_normal(width) / np.sqrt(width)
        return cls(alpha * w, alpha * a, x, y)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """(n, d) inputs to (n,) outputs."""
        return np.maximum(x @ self.w.T, 0.0) @ self.a

    def loss_and_grads(self) -> tuple[float, np.ndarray, np.ndarray]:
        """Training logistic loss and its gradients with respect to w (m, d) and a (m,)."""
        pre = self.x @ self.w.T
        hidden = np.maximum(pre, 0.0)
        margins = self.y * (hidden @ self.a)
        # d loss / d f_i = -y_i sigmoid(-margin_i) / n
        dout = -self.y * expit(-margins) / len(self.y)
        grad_a = hidden.T @ dout
        grad_w = ((dout[:, None] * (pre > 0.0)) * self.a[None, :]).T @ self.x
        return logistic_loss(margins), grad_w, grad_a

    def loss_and_step(self, lr: float, target: float) -> float:
        """Training loss at the current weights; takes one GD step of size `lr` only if loss > target."""
        loss, grad_w, grad_a = self.loss_and_grads()
        if loss > target and np.isfinite(loss):
            self.w -= lr * grad_w
            self.a -= lr * grad_a
        return loss

    def direction_pr(self) -> float:
        """Participation ratio of the |a|-weighted neuron directions (see `neuron_direction_pr`)."""
        return neuron_direction_pr(self.w, self.a)

    def get_state(self) -> dict[str, np.ndarray]:
        return {"w": self.w.copy(), "a": self.a.copy()}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        self.w = np.array(state["w"], dtype=np.float64)
        self.a = np.array(state["a"], dtype=np.float64)
