"""Binary-classification data for the FLS study: Gaussian clusters, or a local `.npz` (CIFAR at cluster scale).

The paper's two-layer theory setting is reproduced with the §14 synthetic task: `n_clusters` centres of norm
`centre_norm` in R^d, drawn once from the seed, labels alternating +1/-1 by cluster index, each point a
uniformly chosen centre plus isotropic Gaussian noise of standard deviation `noise` per coordinate. The exact
cluster layout of the paper is not reachable, so this generator is a reconstruction [rec] matching the
calibration run of the method notes (§0.3 item 2).

`load_npz` is the cluster-scale path: it reads arrays saved by the user (never downloaded), flattens images,
maps multi-class labels to +/-1 by a set of positive classes (CIFAR-10 default: vehicles {0, 1, 8, 9} vs
animals), and standardises features with training statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA_STREAM = 0
"""Second entry of the `np.random.default_rng([seed, stream])` key used for data (init uses another)."""


@dataclass(frozen=True)
class Dataset:
    """Train and test arrays; features (n, d) float64, labels (n,) in {-1.0, +1.0}."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.x_train.shape[1])


def cluster_centres(rng: np.random.Generator, n_clusters: int, d: int, centre_norm: float) -> np.ndarray:
    """(n_clusters, d) centres with uniformly random directions, each of Euclidean norm `centre_norm`."""
    centres = rng.standard_normal((n_clusters, d))
    return centre_norm * centres / np.linalg.norm(centres, axis=1, keepdims=True)


def cluster_labels(n_clusters: int) -> np.ndarray:
    """(n_clusters,) labels alternating +1, -1, +1, ... by cluster index."""
    return np.where(np.arange(n_clusters) % 2 == 0, 1.0, -1.0)


def sample_clusters(
    rng: np.random.Generator, centres: np.ndarray, labels: np.ndarray, n: int, noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """n points: a uniformly chosen centre plus N(0, noise^2 I); returns x (n, d) and y (n,)."""
    index = rng.integers(0, centres.shape[0], size=n)
    x = centres[index] + noise * rng.standard_normal((n, centres.shape[1]))
    return x, labels[index]


def make_clusters(
    *,
    seed: int,
    n_train: int,
    n_test: int,
    d: int,
    n_clusters: int,
    noise: float,
    centre_norm: float,
) -> Dataset:
    """The §14 Gaussian-cluster task; depends only on `seed` and the sizes (not on the model's alpha)."""
    rng = np.random.default_rng([seed, DATA_STREAM])
    centres = cluster_centres(rng, n_clusters, d, centre_norm)
    labels = cluster_labels(n_clusters)
    x_train, y_train = sample_clusters(rng, centres, labels, n_train, noise)
    x_test, y_test = sample_clusters(rng, centres, labels, n_test, noise)
    return Dataset(x_train, y_train, x_test, y_test)


def binary_labels(raw: np.ndarray, positive_labels: Sequence[int]) -> np.ndarray:
    """(n,) raw labels to +/-1: {-1, 1} and {0, 1} pass through, anything else is +1 iff in `positive_labels`."""
    raw = np.asarray(raw).reshape(-1)
    values = set(np.unique(raw).tolist())
    if values <= {-1, 1}:
        return raw.astype(np.float64)
    if values <= {0, 1}:
        return 2.0 * raw.astype(np.float64) - 1.0
    return np.where(np.isin(raw, np.asarray(positive_labels)), 1.0, -1.0)


def load_npz(path: str | Path, *, seed: int, n_train: int, n_test: int, positive_labels: Sequence[int]) -> Dataset:
    """Read `x_train, y_train, x_test, y_test` from a local .npz; subsample n_train/n_test by the seed.

    Images of any shape are flattened to vectors. Features are standardised per coordinate with the
    subsampled training set's mean and standard deviation, so that |x|^2 is about d as for the clusters.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data_path {str(path)!r} does not exist (save x_train, y_train, x_test, y_test)")
    with np.load(path) as arrays:
        missing = {"x_train", "y_train", "x_test", "y_test"} - set(arrays.files)
        if missing:
            raise KeyError(f"{path} lacks arrays {sorted(missing)}")
        x_train, y_train = arrays["x_train"], arrays["y_train"]
        x_test, y_test = arrays["x_test"], arrays["y_test"]
    rng = np.random.default_rng([seed, DATA_STREAM])
    train_index = rng.permutation(len(x_train))[: min(n_train, len(x_train))]
    test_index = rng.permutation(len(x_test))[: min(n_test, len(x_test))]
    xs = x_train[train_index].reshape(len(train_index), -1).astype(np.float64)
    xt = x_test[test_index].reshape(len(test_index), -1).astype(np.float64)
    mean, std = xs.mean(axis=0), xs.std(axis=0)
    std = np.where(std > 1e-12, std, 1.0)
    return Dataset(
        x_train=(xs - mean) / std,
        y_train=binary_labels(y_train[train_index], positive_labels),
        x_test=(xt - mean) / std,
        y_test=binary_labels(y_test[test_index], positive_labels),
    )
