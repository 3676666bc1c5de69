"""Local-path loader for real population recordings (the cluster-scale path; never a hub download).

Format: one `.npz` file with ``activity`` of shape (trials, neurons, time) (the layout most spike-sorting
and trial-aligned rate exports use) and an optional scalar ``dt`` (seconds per bin, in units of the network
time constant tau if the file says so). The study works on (trials, time, neurons), so `load_recording`
transposes. Anything else in the file is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Recording:
    """Activity (trials, time, neurons) as float64, and the bin width dt."""

    activity: np.ndarray
    dt: float


def save_recording(path: str | Path, activity_tnt: np.ndarray, dt: float) -> Path:
    """Write activity of shape (trials, neurons, time) and dt to `path` (.npz)."""
    array = np.asarray(activity_tnt, dtype=np.float32)
    if array.ndim != 3:
        raise ValueError(f"activity must be (trials, neurons, time), got shape {array.shape}")
    path = Path(path)
    np.savez_compressed(path, activity=array, dt=np.float64(dt))
    return path if path.suffix == ".npz" else path.with_suffix(path.suffix + ".npz")


def load_recording(path: str | Path, default_dt: float = 0.1, zscore: bool = False) -> Recording:
    """Read a recording saved as above; returns activity as (trials, time, neurons).

    `zscore` standardises each neuron over trials and time (real rates are not on the model's scale).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no recording at {path}")
    with np.load(path) as archive:
        if "activity" not in archive:
            raise KeyError(f"{path}: expected an array named 'activity' (trials, neurons, time)")
        activity = np.asarray(archive["activity"], dtype=np.float64)
        dt = float(archive["dt"]) if "dt" in archive else default_dt
    if activity.ndim != 3:
        raise ValueError(f"{path}: 'activity' must be (trials, neurons, time), got shape {activity.shape}")
    if not np.isfinite(activity).all():
        raise ValueError(f"{path}: 'activity' contains NaN or inf")
    activity = activity.transpose(0, 2, 1)
    if zscore:
        flat = activity.reshape(-1, activity.shape[-1])
        activity = (activity - flat.mean(axis=0)) / np.maximum(flat.std(axis=0), 1e-8)
    return Recording(activity=activity, dt=dt)
