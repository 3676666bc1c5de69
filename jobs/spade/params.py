"""Every knob of the SPADE study, with laptop defaults; `scale: paper` restores the official constants.

Laptop deviations from the official code (all undone by `scale: paper`, see `PAPER_CONSTANTS`):

- sizes: hidden 128 (paper 2048), t_dim 64 (128), T = 50 (100), 20 epochs (100), EA population 64 with
  32 elites (128 / 64), 64 acquisition samples over 10 DDIM steps (256 over 50), top-k 64 (128). The EA
  keeps the paper's 100 generations: with 30, the unregularised arms rarely travel far enough out of the
  support to meet the deceptive trend, so the ablation has nothing to separate;
- `beta_end` 0.04 (paper 0.02): with half the steps this keeps ᾱ_T ≈ 0.36, the paper's noise endpoint;
- `support_probes` 1.0 (paper 0.0, i.e. off) [rec]: L_sup is also applied at Gaussian perturbations of the
  batch (std in z-units) with their kNN statistics computed on the fly, so that the support term reaches
  off-support designs that a 20-epoch model would otherwise extrapolate freely;
- `sup_tau_a` 0.3 (paper 0.02): at laptop size the test-time shift −τ_a·log r_k must be visible
  against the surrogate's error for the support transform to matter.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from raygent.platform.study import StudyParams

PAPER_CONSTANTS: dict[str, Any] = {
    "hidden": 2048,
    "t_dim": 128,
    "diffusion_steps": 100,
    "beta_end": 0.02,
    "epochs": 100,
    "acq_samples": 256,
    "acq_ddim_steps": 50,
    "ea_population": 128,
    "ea_elites": 64,
    "ea_generations": 100,
    "top_k": 128,
    "support_probes": 0.0,
    "sup_tau_a": 0.02,
}


class SpadeParams(StudyParams):
    """The knobs one SPADE trial reads. `calib` and `support` are λ_cal and λ_sup (0 turns a term off)."""

    # the ablation
    calib: float = Field(1.0, ge=0)
    support: float = Field(1.0, ge=0)
    # task
    task: Literal["continuous", "tfbind", "npz"] = "continuous"
    task_path: str | None = None
    oracle_entry: str | None = None
    dim: int = Field(8, ge=2)
    n_train: int = Field(2000, ge=32)
    n_heldout: int = Field(500, ge=0)
    percentile: float = Field(50.0, gt=0, lt=100)
    trend: float = 0.4
    background: float = Field(0.5, ge=0)
    frequency: float = Field(2.0, ge=0)
    hull_penalty: float = Field(5.0, ge=0)
    # surrogate
    hidden: int = Field(128, ge=8)
    t_dim: int = Field(64, ge=4)
    diffusion_steps: int = Field(50, ge=2)
    beta_start: float = Field(1e-4, gt=0)
    beta_end: float = Field(0.04, gt=0, lt=1)
    epochs: int = Field(20, ge=1)
    batch_size: int = Field(64, ge=2)
    lr: float = Field(1e-3, gt=0)
    grad_clip: float = Field(1.0, gt=0)
    # calibrated diffusion estimation
    cal_samples: int = Field(4, ge=2)
    cal_ddim_steps: int = Field(10, ge=1)
    cal_pairs: int = Field(32, ge=0)
    cal_temperature: float = Field(1.0, gt=0)
    # support-proximity regularisation
    knn_k: int = Field(10, ge=1)
    sup_tau_a: float = Field(0.3, ge=0)
    sup_sigma_a0: float = Field(0.02, ge=0)
    sup_sigma_a1: float = Field(0.005, ge=0)
    support_probes: float = Field(1.0, ge=0)
    support_transform: bool = True
    # acquisition and evolutionary search
    acq_beta: float = Field(0.1, ge=0)
    acq_samples: int = Field(64, ge=2)
    acq_ddim_steps: int = Field(10, ge=1)
    ea_population: int = Field(64, ge=4)
    ea_elites: int = Field(32, ge=1)
    ea_generations: int = Field(100, ge=1)
    ea_init_noise: float = Field(0.05, ge=0)
    ea_crossover: float = Field(0.3, ge=0, le=1)
    ea_sigma: float = Field(0.12, gt=0)
    ea_sigma_decay: float = Field(0.98, gt=0, le=1)
    ea_sigma_min: float = Field(0.02, ge=0)
    top_k: int = Field(64, ge=1)
    # conservatism probe: designs `ood_distance` z-units beyond the data's extreme along random directions
    ood_probes: int = Field(64, ge=1)
    ood_distance: float = Field(3.0, gt=0)
    report_every: int = Field(5, ge=1)

    def effective(self) -> SpadeParams:
        """The parameters a trial runs with: `scale: paper` overrides the sizes with `PAPER_CONSTANTS`."""
        return self.model_copy(update=PAPER_CONSTANTS) if self.scale == "paper" else self
