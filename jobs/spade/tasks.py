"""Offline black-box optimisation tasks with a Design-Bench-style interface.

A task is an offline dataset `(x, y)`, the box `bounds` designs are clipped to, an `oracle` that scores
any design, and the `y_min`/`y_max` of the *full* task (hidden top included) used to normalise scores
the way Design-Bench does. Designs live in "model space": float vectors; a discrete task stores one-hot
rows and maps any float vector back to a valid design with `project_fn`.

Three sources:

- `make_continuous_task`: a synthetic d-dimensional task built from the seed. The oracle is
  f(x) = background(x) + trend·(u·x) + peak(x) − hull_penalty·dist(x, ball)², i.e. a smooth random
  background, a peak inside the support ball and a linear trend that keeps rising in direction u while
  the true score falls once x leaves the ball. A surrogate fit on the data extrapolates the trend upward
  out of support ("deceptive extrapolation").
- `make_tfbind_task`: a TF-Bind-8-like enumerable task, 8-mers over 4 letters (65,536 sequences) with an
  additive position-weight term plus adjacent pairwise terms.
- `load_npz_task`: a local `.npz` export (e.g. of a real Design-Bench task on the cluster). The oracle is a
  lookup table stored in the file (exact for enumerable tasks such as TF-Bind-8/10) or a callable named by
  `oracle_entry` ("module:attr"). `save_npz_task` writes the same format.

Both synthetic tasks hide the top: the offline data are drawn from the designs scoring below the
`percentile`-th percentile of the full pool, as Design-Bench does. These tasks are reconstructions
[rec]; the paper evaluates on Design-Bench (SuperConductor, Ant, D'Kitty, TF-Bind-8/10) and LLM-DM.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Oracle = Callable[[np.ndarray], np.ndarray]
ProjectFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class OfflineTask:
    """An offline optimisation task; every array is in model space (float designs).

    Attributes: `x` (N, D) offline designs; `y` (N,) their scores; `bounds` (D, 2) lower/upper box;
    `y_min`/`y_max` of the full task; `x_heldout`/`y_heldout` (M, D)/(M,) more below-threshold designs
    that training never sees (for surrogate diagnostics; may be empty).
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    oracle: Oracle
    bounds: np.ndarray
    y_min: float
    y_max: float
    is_discrete: bool = False
    project_fn: ProjectFn | None = None
    x_heldout: np.ndarray | None = None
    y_heldout: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])

    def normalize(self, y: np.ndarray) -> np.ndarray:
        """Design-Bench normalisation (y − y_min) / (y_max − y_min) with the full task's range."""
        return (np.asarray(y, dtype=np.float64) - self.y_min) / (self.y_max - self.y_min)

    def score(self, designs: np.ndarray) -> np.ndarray:
        """Normalised oracle scores of (N, D) designs (projected first on discrete tasks)."""
        if self.project_fn is not None:
            designs = self.project_fn(designs)
        return self.normalize(self.oracle(designs))


def _split_offline(
    rng: np.random.Generator, y_pool: np.ndarray, percentile: float, n_train: int, n_heldout: int
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of training and held-out designs drawn from the pool's below-percentile part."""
    below = np.flatnonzero(y_pool < np.percentile(y_pool, percentile))
    if n_train + n_heldout > below.size:
        raise ValueError(f"need {n_train + n_heldout} below-threshold designs, the pool has {below.size}")
    chosen = rng.permutation(below)[: n_train + n_heldout]
    return chosen[:n_train], chosen[n_train:]


def _box(x: np.ndarray) -> np.ndarray:
    return np.stack([x.min(axis=0), x.max(axis=0)], axis=1).astype(np.float32)


# ---------------------------------------------------------------------------------------------------
# Continuous synthetic task


@dataclass(frozen=True)
class DeceptiveOracle:
    """f(x) = Σ_m a_m sin(ω_m·s + φ_m) + trend·(u·s) + h·exp(−‖s − p‖²/2w²) − c·max(0, ‖x‖ − R)², s = x/R.

    The support is the ball of radius R around the origin; R = √(d + 2) gives a pool uniform in it unit
    variance per coordinate, so the hull penalty is in units of the data's σ. Inside the ball f rises
    along u; outside it the quadratic hull penalty wins. Call with (N, d) designs, returns (N,) scores.
    """

    freqs: np.ndarray
    phases: np.ndarray
    amps: np.ndarray
    direction: np.ndarray
    trend: float
    peak_center: np.ndarray
    peak_height: float
    peak_width: float
    radius: float
    hull_penalty: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        s = x / self.radius
        background = np.sin(s @ self.freqs.T + self.phases) @ self.amps
        peak = self.peak_height * np.exp(-np.sum((s - self.peak_center) ** 2, axis=1) / (2 * self.peak_width**2))
        outside = np.maximum(np.linalg.norm(x, axis=1) - self.radius, 0.0)
        return background + self.trend * (s @ self.direction) + peak - self.hull_penalty * outside**2


def make_continuous_task(
    seed: int,
    *,
    dim: int = 8,
    n_pool: int = 10000,
    n_train: int = 2000,
    n_heldout: int = 500,
    percentile: float = 50.0,
    trend: float = 0.4,
    background: float = 0.5,
    frequency: float = 2.0,
    peak_height: float = 1.0,
    peak_width: float = 0.35,
    hull_penalty: float = 5.0,
) -> OfflineTask:
    """The deceptive-extrapolation task; the pool is uniform in the ball of radius √(d + 2), the data its
    below-percentile part."""
    rng = np.random.default_rng([seed, 1])
    direction = rng.normal(size=dim)
    direction /= np.linalg.norm(direction)
    side = rng.normal(size=dim)
    side -= (side @ direction) * direction
    side /= np.linalg.norm(side)
    n_waves = 2 * dim
    oracle = DeceptiveOracle(
        freqs=rng.normal(scale=frequency, size=(n_waves, dim)),
        phases=rng.uniform(0, 2 * np.pi, size=n_waves),
        amps=rng.normal(size=n_waves) * background / np.sqrt(n_waves / 2),
        direction=direction,
        trend=trend,
        peak_center=-0.3 * direction + 0.45 * side,
        peak_height=peak_height,
        peak_width=peak_width,
        radius=float(np.sqrt(dim + 2)),
        hull_penalty=hull_penalty,
    )
    gauss = rng.normal(size=(n_pool, dim))
    radii = oracle.radius * rng.uniform(size=(n_pool, 1)) ** (1 / dim)
    pool = gauss / np.linalg.norm(gauss, axis=1, keepdims=True) * radii
    y_pool = oracle(pool)
    train, heldout = _split_offline(rng, y_pool, percentile, n_train, n_heldout)
    x = pool[train].astype(np.float32)
    return OfflineTask(
        name="continuous",
        x=x,
        y=y_pool[train].astype(np.float32),
        oracle=oracle,
        bounds=_box(x),
        y_min=float(y_pool.min()),
        y_max=float(y_pool.max()),
        x_heldout=pool[heldout].astype(np.float32),
        y_heldout=y_pool[heldout].astype(np.float32),
    )


# ---------------------------------------------------------------------------------------------------
# Discrete sequences


def tokens_to_onehot(tokens: np.ndarray, vocab: int) -> np.ndarray:
    """(N, L) integer tokens → (N, L·vocab) float32 one-hot rows."""
    tokens = np.asarray(tokens, dtype=np.int64)
    return np.eye(vocab, dtype=np.float32)[tokens].reshape(tokens.shape[0], -1)


def onehot_to_tokens(x: np.ndarray, vocab: int) -> np.ndarray:
    """(N, L·vocab) float rows → (N, L) tokens by per-position argmax (the discrete `project_fn` core)."""
    x = np.asarray(x)
    return x.reshape(x.shape[0], -1, vocab).argmax(axis=2)


def onehot_projector(vocab: int) -> ProjectFn:
    """`project_fn` of a one-hot sequence task: snap each position to its largest entry."""

    def project(x: np.ndarray) -> np.ndarray:
        return tokens_to_onehot(onehot_to_tokens(x, vocab), vocab)

    return project


class LookupOracle:
    """Exact oracle from a table of (design, score) rows; designs are matched byte-for-byte.

    `keys` are (M, L) integer tokens (discrete, `vocab` given) or (M, D) float32 designs (continuous).
    Discrete queries are one-hot rows and are projected first.
    """

    def __init__(self, keys: np.ndarray, values: np.ndarray, vocab: int | None = None) -> None:
        self.vocab = vocab
        self._dtype = np.int64 if vocab is not None else np.float32
        keys = np.ascontiguousarray(keys, dtype=self._dtype)
        self._table = {row.tobytes(): float(v) for row, v in zip(keys, np.asarray(values), strict=True)}

    def __call__(self, x: np.ndarray) -> np.ndarray:
        rows = onehot_to_tokens(x, self.vocab) if self.vocab is not None else x
        rows = np.ascontiguousarray(rows, dtype=self._dtype)
        try:
            return np.array([self._table[row.tobytes()] for row in rows])
        except KeyError:
            raise KeyError("design not in the lookup oracle's table; give `oracle_entry` for this task") from None


def make_tfbind_task(
    seed: int,
    *,
    length: int = 8,
    vocab: int = 4,
    n_train: int = 2000,
    n_heldout: int = 500,
    percentile: float = 50.0,
    pairwise: float = 0.5,
) -> OfflineTask:
    """TF-Bind-like task: f(s) = Σ_i W[i, s_i] + Σ_i P_i[s_i, s_{i+1}], every sequence enumerated."""
    rng = np.random.default_rng([seed, 2])
    weights = rng.normal(size=(length, vocab))
    pairs = rng.normal(scale=pairwise, size=(length - 1, vocab, vocab))
    grids = np.meshgrid(*[np.arange(vocab)] * length, indexing="ij")
    tokens = np.stack([g.ravel() for g in grids], axis=1)
    positions = np.arange(length)
    y_all = weights[positions, tokens].sum(axis=1)
    y_all += pairs[positions[:-1], tokens[:, :-1], tokens[:, 1:]].sum(axis=1)
    train, heldout = _split_offline(rng, y_all, percentile, n_train, n_heldout)
    x = tokens_to_onehot(tokens[train], vocab)
    return OfflineTask(
        name="tfbind",
        x=x,
        y=y_all[train].astype(np.float32),
        oracle=LookupOracle(tokens, y_all, vocab=vocab),
        bounds=np.tile(np.array([[0.0, 1.0]], dtype=np.float32), (x.shape[1], 1)),
        y_min=float(y_all.min()),
        y_max=float(y_all.max()),
        is_discrete=True,
        project_fn=onehot_projector(vocab),
        x_heldout=tokens_to_onehot(tokens[heldout], vocab),
        y_heldout=y_all[heldout].astype(np.float32),
    )


# ---------------------------------------------------------------------------------------------------
# Local .npz exports (the cluster path for real Design-Bench data)


def save_npz_task(task: OfflineTask, path: Path, *, oracle_x: np.ndarray, oracle_y: np.ndarray) -> None:
    """Write `task` in the format `load_npz_task` reads, with (oracle_x, oracle_y) as the lookup table.

    Discrete tasks are stored as integer tokens (`x` (N, L), `vocab_size`), as Design-Bench exports them;
    `oracle_x` is then given as tokens too.
    """
    arrays: dict[str, np.ndarray | np.generic] = {
        "y": task.y,
        "y_min": np.float64(task.y_min),
        "y_max": np.float64(task.y_max),
        "oracle_x": oracle_x,
        "oracle_y": oracle_y,
        "name": np.str_(task.name),
    }
    vocab = task.x.shape[1] // int(oracle_x.shape[1]) if task.is_discrete else 0
    if task.is_discrete:
        arrays |= {"x": onehot_to_tokens(task.x, vocab), "vocab_size": np.int64(vocab)}
    else:
        arrays |= {"x": task.x, "bounds": task.bounds}
    if task.x_heldout is not None and task.y_heldout is not None:
        held = onehot_to_tokens(task.x_heldout, vocab) if task.is_discrete else task.x_heldout
        arrays |= {"x_heldout": held, "y_heldout": task.y_heldout}
    np.savez(path, allow_pickle=True, **arrays)  # numpy's default, named so mypy does not match **arrays to it


def _load_callable(entry: str) -> Oracle:
    module_name, _, attr = entry.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def load_npz_task(path: str | Path, *, oracle_entry: str | None = None) -> OfflineTask:
    """Read a task export: keys `x`, `y`, `y_min`, `y_max`; optional `vocab_size` (discrete tokens),
    `bounds`, `oracle_x`/`oracle_y` (lookup oracle), `x_heldout`/`y_heldout`, `name`.

    `oracle_entry` ("module:attr", a callable on (N, D) model-space designs) overrides the lookup table;
    one of the two must be present.
    """
    data = np.load(Path(path), allow_pickle=False)
    vocab = int(data["vocab_size"]) if "vocab_size" in data else None
    if oracle_entry is not None:
        oracle: Oracle = _load_callable(oracle_entry)
    elif "oracle_x" in data and "oracle_y" in data:
        oracle = LookupOracle(data["oracle_x"], data["oracle_y"], vocab=vocab)
    else:
        raise ValueError(f"{path}: no oracle_x/oracle_y table in the file and no oracle_entry given")

    def to_model(x: np.ndarray) -> np.ndarray:
        return tokens_to_onehot(x, vocab) if vocab is not None else np.asarray(x, dtype=np.float32)

    x = to_model(data["x"])
    if vocab is not None:
        bounds = np.tile(np.array([[0.0, 1.0]], dtype=np.float32), (x.shape[1], 1))
    else:
        bounds = np.asarray(data["bounds"], dtype=np.float32) if "bounds" in data else _box(x)
    held = "x_heldout" in data and "y_heldout" in data
    return OfflineTask(
        name=str(data["name"]) if "name" in data else Path(path).stem,
        x=x,
        y=np.asarray(data["y"], dtype=np.float32).reshape(-1),
        oracle=oracle,
        bounds=bounds,
        y_min=float(data["y_min"]),
        y_max=float(data["y_max"]),
        is_discrete=vocab is not None,
        project_fn=onehot_projector(vocab) if vocab is not None else None,
        x_heldout=to_model(data["x_heldout"]) if held else None,
        y_heldout=np.asarray(data["y_heldout"], dtype=np.float32).reshape(-1) if held else None,
    )
