"""The objectives f the workers differentiate: ℓ2-regularised logistic regression and a ripple quadratic.

Both are generated from a seed at laptop scale; logistic regression can instead read a real data set from a
local file (`load_dataset`, `.npz` or LIBSVM/svmlight text), which is the cluster-scale path. Reconstruction
[rec]: the paper's experimental objectives were not readable; the method notes suggest these two.

Every objective is a frozen, picklable dataclass with `grad(x)` (shape (d,) → (d,)), `grad_norm_sq(x)` and
the start point `x0`, so Ray can ship it to the parameter server and the gradient workers unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from scipy.special import expit

ObjectiveKind = Literal["logistic", "ripple"]


class Objective(Protocol):
    """What the simulator, the server and the oracle need from f."""

    x0: np.ndarray

    def grad(self, x: np.ndarray) -> np.ndarray: ...

    def grad_norm_sq(self, x: np.ndarray) -> float: ...


@dataclass(frozen=True, eq=False)
class LogisticRegression:
    """f(x) = (1/n)·Σ log(1 + exp(−y_i·a_iᵀx)) + (λ/2)·‖x‖²; features (n, d), labels (n,) in {−1, +1}."""

    features: np.ndarray
    labels: np.ndarray
    l2: float
    x0: np.ndarray

    def value(self, x: np.ndarray) -> float:
        margins = self.labels * (self.features @ x)
        return float(np.logaddexp(0.0, -margins).mean() + 0.5 * self.l2 * x @ x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        margins = self.labels * (self.features @ x)
        weights = -self.labels * expit(-margins)
        return self.features.T @ weights / len(self.labels) + self.l2 * x

    def grad_norm_sq(self, x: np.ndarray) -> float:
        g = self.grad(x)
        return float(g @ g)


@dataclass(frozen=True, eq=False)
class RippleQuadratic:
    """f(x) = ½·uᵀHu + α·Σ_i (1 − cos(ω·u_i)), u = x − center; H (d, d) symmetric positive definite.

    The ripple makes f non-convex once α·ω² exceeds H's smallest eigenvalue; `center` stays a minimiser.
    """

    hessian: np.ndarray
    center: np.ndarray
    amplitude: float
    frequency: float
    x0: np.ndarray

    def value(self, x: np.ndarray) -> float:
        u = x - self.center
        return float(0.5 * u @ self.hessian @ u + self.amplitude * np.sum(1.0 - np.cos(self.frequency * u)))

    def grad(self, x: np.ndarray) -> np.ndarray:
        u = x - self.center
        return self.hessian @ u + self.amplitude * self.frequency * np.sin(self.frequency * u)

    def grad_norm_sq(self, x: np.ndarray) -> float:
        g = self.grad(x)
        return float(g @ g)


def _unit(rng: np.random.Generator, dim: int) -> np.ndarray:
    v = rng.standard_normal(dim)
    return v / np.linalg.norm(v)


def make_logistic(
    rng: np.random.Generator,
    n_samples: int,
    dim: int,
    l2: float,
    init_distance: float,
    features: np.ndarray | None = None,
    labels: np.ndarray | None = None,
) -> LogisticRegression:
    """Planted-model logistic regression (10% label flips), or the given data; x0 at `init_distance` from 0."""
    if features is None or labels is None:
        features = rng.standard_normal((n_samples, dim))
        planted = 2.0 * _unit(rng, dim)
        labels = np.sign(features @ planted + 1e-12)
        labels[rng.random(n_samples) < 0.1] *= -1.0
    dim = features.shape[1]
    return LogisticRegression(features=features, labels=labels, l2=l2, x0=init_distance * _unit(rng, dim))


def make_ripple(
    rng: np.random.Generator,
    dim: int,
    condition: float,
    amplitude: float,
    frequency: float,
    init_distance: float,
) -> RippleQuadratic:
    """H = Q·diag(λ)·Qᵀ with λ log-spaced in [1/κ, 1] and Q random orthogonal; x0 at `init_distance` from the centre."""
    q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    eigenvalues = np.logspace(-np.log10(condition), 0.0, dim)
    hessian = (q * eigenvalues) @ q.T
    center = rng.standard_normal(dim)
    return RippleQuadratic(
        hessian=0.5 * (hessian + hessian.T),
        center=center,
        amplitude=amplitude,
        frequency=frequency,
        x0=center + init_distance * _unit(rng, dim),
    )


def load_dataset(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Reads (features (n, d) float64 with unit-norm rows, labels (n,) in {−1, +1}) from a local file.

    `.npz` files need arrays `features` and `labels`; any other suffix is read as LIBSVM/svmlight text
    (the format of the LIBSVM binary-classification collection). Labels {0, 1} become {−1, +1}.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data set {path} does not exist")
    if path.suffix == ".npz":
        with np.load(path) as data:
            features, labels = np.asarray(data["features"], float), np.asarray(data["labels"], float)
    else:
        from sklearn.datasets import load_svmlight_file

        sparse, labels = load_svmlight_file(str(path))
        features = np.asarray(sparse.todense(), float)
    classes = np.unique(labels)
    if len(classes) != 2:
        raise ValueError(f"{path}: expected two label classes, got {classes.tolist()}")
    labels = np.where(labels == classes.max(), 1.0, -1.0)
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.maximum(norms, 1e-12), labels
