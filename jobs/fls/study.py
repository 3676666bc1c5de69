"""FLS study: "Over-Alignment vs Over-Fitting: The Role of Feature Learning Strength in Generalization"
(Yeom, Ha, Lee; arXiv 2602.00827) as a Ray Tune study.

One trial trains one network at init scale alpha (feature-learning strength FLS ~ 1/alpha) by full-batch GD on
the logistic loss, stops at the first iterate with train loss <= eps_target, and reports the test error and the
participation ratio of the neuron directions. The sweep over alpha x seeds should show an interior optimum of the
test error (too small alpha: over-alignment, neurons collapse onto few directions; too large alpha: lazy
over-fitting) with the participation ratio rising monotonically in alpha.

Scales: `laptop` trains the paper's two-layer ReLU net (`model.py`) on the §14 Gaussian clusters (`data.py`);
`paper` switches to a 3-layer MLP with an output multiplier (`deep.py`), normally on a local CIFAR `.npz` given
by `data_path`. `architecture` overrides either choice. What is reconstructed is said in each module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field
from threadpoolctl import threadpool_limits

from raygent.jobs.fls.analysis import (
    GD_STEPS,
    METRICS,
    PARTICIPATION_RATIO,
    REACHED_TARGET,
    TEST_ERROR,
    TRAIN_ERROR,
    TRAIN_LOSS,
    alpha_curve,
    curve_checks,
    split_groups,
    varying_knobs,
)
from raygent.jobs.fls.data import Dataset, load_npz, make_clusters
from raygent.jobs.fls.descent import descend_to_target
from raygent.jobs.fls.model import Network, TwoLayerReLU, effective_lr, zero_one_error
from raygent.jobs.fls.plotting import plot_error_and_pr
from raygent.platform import session
from raygent.platform.study import StudyParams, Verdict, completed, trial_counts, verdict

REQUIRED = (TEST_ERROR, PARTICIPATION_RATIO)
"""The columns a trial must have reported to count as completed."""


class FLSParams(StudyParams):
    """Every knob of one FLS trial. `d` is ignored when `data_path` gives the data."""

    alpha: float = Field(0.3, gt=0, description="init scale; FLS ~ 1/alpha")
    eps_target: float = Field(0.05, gt=0, description="stop at the first iterate with train loss <= this")
    width: int = Field(256, ge=1, description="hidden width m")
    n_train: int = Field(100, ge=2)
    n_test: int = Field(10_000, ge=1)
    d: int = Field(30, ge=1, description="input dimension of the generated clusters")
    n_clusters: int = Field(12, ge=2)
    noise: float = Field(0.6, ge=0, description="per-coordinate std of the cluster noise")
    centre_norm: float = Field(2.0, gt=0)
    lr: float = Field(0.2, gt=0)
    lr_scaling: Literal["stable", "none"] = Field("stable", description="'stable': step lr / max(1, alpha^2)")
    max_iters: int = Field(20_000, ge=1, description="cap on GD steps; `reached_target` says if it bound")
    architecture: Literal["two_layer", "mlp3"] | None = Field(None, description="None: two_layer unless paper")
    data_path: str | None = Field(None, description="local .npz with x_train, y_train, x_test, y_test")
    positive_labels: tuple[int, ...] = Field((0, 1, 8, 9), description="classes mapped to +1 (CIFAR vehicles)")
    checkpoint_every: int = Field(0, ge=0, description="GD steps between resumable checkpoints (0: none)")

    def resolved_architecture(self) -> Literal["two_layer", "mlp3"]:
        if self.architecture is not None:
            return self.architecture
        return "mlp3" if self.scale == "paper" else "two_layer"


def build_dataset(params: FLSParams) -> Dataset:
    """The trial's data: the local .npz when `data_path` is set, else the seed's Gaussian clusters."""
    if params.data_path is not None:
        return load_npz(
            params.data_path,
            seed=params.seed,
            n_train=params.n_train,
            n_test=params.n_test,
            positive_labels=params.positive_labels,
        )
    return make_clusters(
        seed=params.seed,
        n_train=params.n_train,
        n_test=params.n_test,
        d=params.d,
        n_clusters=params.n_clusters,
        noise=params.noise,
        centre_norm=params.centre_norm,
    )


def build_model(params: FLSParams, data: Dataset) -> Network:
    """The two-layer numpy net, or the deep torch net (imported only then, with one torch thread)."""
    if params.resolved_architecture() == "two_layer":
        return TwoLayerReLU.init(data.x_train, data.y_train, params.width, params.alpha, params.seed)
    import torch

    from raygent.jobs.fls.deep import DeepReLU

    torch.set_num_threads(1)
    return DeepReLU.init(data.x_train, data.y_train, params.width, params.alpha, params.seed)


class FLSStudy:
    """Test error against feature-learning strength at a fixed target train loss (see module docstring)."""

    name: ClassVar[str] = "fls"
    summary: ClassVar[str] = "Feature-learning strength (init scale) vs test error, GD stopped at a target loss"
    claim: ClassVar[str] = (
        "Test error has an interior minimum in alpha (an optimal feature learning strength), and the "
        "participation ratio of neuron directions is monotone in alpha."
    )
    params_model: ClassVar[type[StudyParams]] = FLSParams
    metric: ClassVar[str] = TEST_ERROR
    mode: ClassVar[Literal["min", "max"]] = "min"

    def trainable(self, config: dict[str, Any]) -> None:
        params = FLSParams.model_validate(config)
        # One BLAS thread: on a shared 2-core machine a multi-threaded OpenBLAS on these small matrices
        # spins and runs ~40x slower than single-threaded.
        with threadpool_limits(limits=1):
            self._train(params)

    def _train(self, params: FLSParams) -> None:
        data = build_dataset(params)
        model = build_model(params, data)
        start_step = 0
        saved = session.restore()
        if saved is not None:
            model.set_state(saved["weights"])
            start_step = int(saved["step"])

        def checkpoint(step: int, loss: float) -> None:
            session.report({GD_STEPS: step, TRAIN_LOSS: loss}, state={"step": step, "weights": model.get_state()})

        descent = descend_to_target(
            model,
            lr=effective_lr(params.lr, params.alpha, params.lr_scaling),
            target=params.eps_target,
            max_iters=params.max_iters,
            start_step=start_step,
            checkpoint_every=params.checkpoint_every,
            on_checkpoint=checkpoint,
        )
        session.report(
            {
                TEST_ERROR: zero_one_error(model.forward(data.x_test), data.y_test),
                TRAIN_ERROR: zero_one_error(model.forward(data.x_train), data.y_train),
                TRAIN_LOSS: float(descent.train_loss),
                PARTICIPATION_RATIO: float(model.direction_pr()),
                GD_STEPS: int(descent.steps),
                REACHED_TARGET: int(descent.reached_target),
            }
        )

    def analyze(self, results: pd.DataFrame) -> Verdict:
        done = completed(results, REQUIRED, METRICS)
        evidence: dict[str, Any] = trial_counts(results, done)
        if done.empty:
            return verdict(self.claim, {"trials_completed": False}, evidence)
        knobs = varying_knobs(done, list(FLSParams.model_fields))
        checks: dict[str, bool] = {}
        argmin_by_group: dict[str, float] = {}
        for label, rows in split_groups(done, knobs):
            group_checks, group_evidence = curve_checks(alpha_curve(rows))
            if label:
                checks.update({f"{name}[{label}]": ok for name, ok in group_checks.items()})
                evidence[label] = group_evidence
                argmin_by_group[label] = group_evidence["argmin_alpha"]
            else:
                checks.update(group_checks)
                evidence.update(group_evidence)
        if argmin_by_group:
            evidence["argmin_alpha_by_group"] = argmin_by_group
        return verdict(self.claim, checks, evidence)

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        done = completed(results, REQUIRED, METRICS)
        plot_error_and_pr(done, varying_knobs(done, list(FLSParams.model_fields)), Path(path))
