"""Image data for the HySCAN study: sklearn digits, a seeded synthetic set, and an `.npz` loader for cluster data.

Every loader returns an `ImageSplit` of float32 images in [0, 1], shape (N, C, H, W), and int64 labels, so the
smoothing σ and the attack ε mean the same thing on every dataset (the paper's inputs are also in [0, 1]).

- `digits`: `sklearn.datasets.load_digits` (1,797 8×8 images, ships with scikit-learn, offline), a stratified split.
- `synthetic`: 10 classes of 8×8 patterns made from the seed: each class is a random smooth template; a sample is
  the template shifted by up to one pixel, scaled in contrast and with pixel noise.
- `npz`: a local file holding `images`, `labels` (split here), or `x_train`, `y_train`, `x_test`, `y_test`. Images
  may be uint8 (0–255) or float in [0, 1], channel-last (N, H, W, C) as CIFAR ships, channel-first, or (N, H, W).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import Tensor

DatasetName = Literal["digits", "synthetic", "npz"]


@dataclass(frozen=True)
class ImageSplit:
    """Train/test images (N, C, H, W) float32 in [0, 1] and labels (N,) int64."""

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor

    @property
    def num_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1

    @property
    def image_shape(self) -> tuple[int, int, int]:
        c, h, w = self.x_train.shape[1:]
        return int(c), int(h), int(w)


def stratified_split(labels: np.ndarray, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) with `n_test` test points spread over classes in proportion to their counts."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(labels))
    classes = np.unique(labels)
    share = {c: round(n_test * float(np.mean(labels == c))) for c in classes}
    test = np.concatenate([order[labels[order] == c][: share[c]] for c in classes])
    extra = n_test - len(test)
    rest = np.setdiff1d(order, test, assume_unique=True)
    if extra > 0:
        test = np.concatenate([test, rng.choice(rest, extra, replace=False)])
    elif extra < 0:
        test = rng.choice(test, n_test, replace=False)
    test = rng.permutation(test)
    train = rng.permutation(np.setdiff1d(np.arange(len(labels)), test))
    return train, test


def _split(images: np.ndarray, labels: np.ndarray, n_test: int, seed: int) -> ImageSplit:
    train, test = stratified_split(labels, n_test, seed)
    x = torch.from_numpy(images.astype(np.float32))
    y = torch.from_numpy(labels.astype(np.int64))
    return ImageSplit(x[train], y[train], x[test], y[test])


def load_digits_split(n_test: int, seed: int) -> ImageSplit:
    """sklearn digits scaled to [0, 1] (pixel values 0–16), shape (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = (bunch.images / 16.0)[:, None]
    return _split(images, bunch.target, n_test, seed)


def synthetic_images(n: int, seed: int, size: int = 8, classes: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """(images (n, 1, size, size) in [0, 1], labels (n,)) from `seed`: class templates are smoothed random fields
    thresholded to strokes; samples are templates rolled by ≤ 1 pixel, contrast in [0.6, 1], plus N(0, 0.05²)."""
    rng = np.random.default_rng(seed)
    kernel = np.array([0.25, 0.5, 0.25])
    templates = []
    for _ in range(classes):
        field = rng.normal(size=(size + 2, size + 2))
        for axis in (0, 1):
            field = np.apply_along_axis(lambda row: np.convolve(row, kernel, mode="same"), axis, field)
        field = field[1:-1, 1:-1]
        templates.append((field > np.quantile(field, 0.6)).astype(np.float64))
    labels = rng.integers(0, classes, n)
    shifts = rng.integers(-1, 2, size=(n, 2))
    contrast = rng.uniform(0.6, 1.0, n)
    images = np.stack([np.roll(templates[c], tuple(s), axis=(0, 1)) for c, s in zip(labels, shifts, strict=True)])
    images = contrast[:, None, None] * images + rng.normal(0.0, 0.05, images.shape)
    return np.clip(images, 0.0, 1.0)[:, None], labels


def load_synthetic_split(n_test: int, seed: int, n: int = 1800) -> ImageSplit:
    images, labels = synthetic_images(n, seed)
    return _split(images, labels, n_test, seed)


def _to_nchw_unit(images: np.ndarray) -> np.ndarray:
    """uint8 or float images in any of (N, H, W), (N, H, W, C), (N, C, H, W) → float32 (N, C, H, W) in [0, 1]."""
    x = images.astype(np.float32)
    if images.dtype == np.uint8 or x.max() > 1.0:
        x = x / 255.0
    if x.ndim == 3:
        return x[:, None]
    if x.ndim != 4:
        raise ValueError(f"images must have 3 or 4 dims, got shape {images.shape}")
    if x.shape[-1] in (1, 3) and x.shape[1] not in (1, 3):
        x = x.transpose(0, 3, 1, 2)
    return np.ascontiguousarray(x)


def save_npz(path: Path, images: np.ndarray, labels: np.ndarray) -> None:
    """Write `images`, `labels` the way `load_npz_split` reads them (used to test the loader)."""
    np.savez_compressed(path, images=images, labels=labels)


def load_npz_split(path: Path, n_test: int, seed: int) -> ImageSplit:
    """Read a local `.npz` (see the module docstring); a file with its own train/test split keeps it and ignores
    `n_test` beyond truncating the test set to it."""
    with np.load(path) as data:
        if {"x_train", "y_train", "x_test", "y_test"} <= set(data.files):
            x_train, x_test = _to_nchw_unit(data["x_train"]), _to_nchw_unit(data["x_test"])
            return ImageSplit(
                torch.from_numpy(x_train),
                torch.from_numpy(data["y_train"].astype(np.int64).ravel()),
                torch.from_numpy(x_test[:n_test]),
                torch.from_numpy(data["y_test"].astype(np.int64).ravel()[:n_test]),
            )
        if not {"images", "labels"} <= set(data.files):
            raise ValueError(
                f"{path}: expected arrays images/labels or x_train/y_train/x_test/y_test, got {data.files}"
            )
        return _split(_to_nchw_unit(data["images"]), data["labels"].ravel(), n_test, seed)


def load_split(name: DatasetName, n_test: int, seed: int, path: str | None = None) -> ImageSplit:
    """The dataset named in the study config."""
    if name == "digits":
        return load_digits_split(n_test, seed)
    if name == "synthetic":
        return load_synthetic_split(n_test, seed)
    if path is None:
        raise ValueError("dataset 'npz' needs data_path")
    return load_npz_split(Path(path), n_test, seed)
