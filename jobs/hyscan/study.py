"""The HySCAN Tune study: hybrid 1-Lipschitz + stochastic net vs a noise-trained plain CNN, within each trial.

Sweep: smoothing σ × attention-noise std × seed. Each trial trains both models with the same budget (epochs, batch,
Adam, learning rate) and the same Gaussian augmentation σ (the notes' baseline: a plain CNN noise-trained at the same
σ), then measures for each: clean accuracy (expected over the model's own randomness), randomized-smoothing certified
accuracy at a grid of ℓ2 radii (Cohen et al., Clopper–Pearson), and ℓ∞ EOT-PGD accuracy under the same attack
(same ε, steps, EOT draws; per-point worst of CE on the trained logits and the CW margin, see `attack.py`); for the
hybrid also the largest operator norm over its deterministic linear layers (power iteration on each assembled layer)
and its deterministic empirical Lipschitz ratio. `analyze` checks the claim at the default σ/noise, means over seeds,
with the notes' thresholds (certified ≥ baseline − 1 point, EOT-PGD ≥ baseline + 2 points, clean drop ≤ 3 points,
norms ≤ 1 + 1e-3 for float32 round-off).

Laptop scale: digits 8×8, widths 16/32, one block per stage, 15 epochs, 150 test points (clean, EOT-PGD: ε = 0.1,
20 steps, 8 EOT draws), the first 100 of them certified with N0 = 100, N = 1,000, α = 0.001 (the notes say N = 2,000;
halved to fit the shared 2-core budget, it caps the radius at 2.46σ and only loosens the bound slightly).
Paper scale is the same code with `scale: paper`, `dataset: npz`, `data_path: <CIFAR .npz>`, widths
[64, 128, 256, 512], strides [1, 2, 2, 2], blocks_per_stage 2, conv_norm power, N0 = 1,000, N = 100,000 (on a GPU
when one is visible). The paper trains with σ = 0.5 whatever the smoothing σ and compares with published defences;
we train both models at the trial's σ, the fair smoothing comparison. The paper's certified radius also takes a max
with a Lipschitz-margin radius; we omit that (see `certify.py`).

Audit of the comparison against the notes (§12): the baseline of both checks is the notes' noise-trained plain CNN
at the trial's σ with the hybrid's training budget, attacked by the same EOT-PGD; the hybrid has the notes'
spectrally normalised convs, frozen RP branches with a per-sample random power-iteration scale, and Gaussian
attention-map noise left on at inference. The verdict is judged at the default σ = 0.25; `evidence["at_paper_sigma"]`
repeats the comparison at the paper's training σ = 0.5 (`PAPER_SIGMA`). Neither holds at laptop scale (see
docs/architecture.md for the numbers, also with 5 RP power iterations, with the learnable branch only and with
an attention after every block).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
import torch
from pydantic import Field

from raygent.jobs.hyscan import plots
from raygent.jobs.hyscan.attack import eot_pgd_linf, expected_accuracy, worst_case
from raygent.jobs.hyscan.certify import certify
from raygent.jobs.hyscan.data import DatasetName, load_split
from raygent.jobs.hyscan.model import AttentionPlacement, Branches, HybridNet, PlainCNN, layer_norms, lipschitz_ratio
from raygent.jobs.hyscan.train import train_classifier
from raygent.platform import session
from raygent.platform.study import StudyParams, Verdict, verdict

MODELS = ("hybrid", "baseline")
RADII = (0.0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0)
# The claim's thresholds, from the method notes' CPU-scale checks (§12). Certified accuracy may trail the baseline
# by one point (the notes' "≥ baseline − 1 point"); the norm bound allows float32 round-off of the power iteration.
CERT_TOLERANCE = 0.01
EOT_GAIN = 0.02
CLEAN_DROP = 0.03
NORM_TOLERANCE = 1e-3
# The paper trains HyCAS with Gaussian augmentation σ = 0.5 whatever the smoothing σ; reported as evidence.
PAPER_SIGMA = 0.5


def cert_key(model: str, radius: float) -> str:
    """Metric name of certified accuracy at `radius`, e.g. `hybrid/cert_acc_r025`."""
    return f"{model}/cert_acc_r{round(radius * 100):03d}"


class HyscanParams(StudyParams):
    """Every knob a trial reads; defaults are the laptop setting."""

    dataset: DatasetName = "digits"
    data_path: str | None = None
    n_test: int = Field(150, ge=10)
    n_certify: int = Field(100, ge=1)
    n_attack: int = Field(150, ge=1)
    smoothing_sigma: float = Field(0.25, gt=0)
    attention_noise: float = Field(0.6, ge=0)
    widths: tuple[int, ...] = (16, 32)
    strides: tuple[int, ...] = (1, 2)
    blocks_per_stage: int = Field(1, ge=1)
    branches: Branches = "all"
    epochs: int = Field(15, ge=1)
    batch_size: int = Field(64, ge=1)
    lr: float = Field(1e-3, gt=0)
    logit_temperature: float = Field(300.0, gt=0)
    n0: int = Field(100, ge=1)
    n_smooth: int = Field(1000, ge=1)
    alpha: float = Field(1e-3, gt=0, lt=1)
    attack_eps: float = Field(0.1, ge=0)
    attack_steps: int = Field(20, ge=1)
    eot_draws: int = Field(8, ge=8)
    attack_loss: Literal["ce", "margin", "worst"] = "worst"
    eval_draws: int = Field(8, ge=1)
    eval_batch: int = Field(512, ge=1)
    gate_norm: Literal["bound", "none"] = "bound"
    conv_norm: Literal["fft", "power"] = "fft"
    rp_scale: Literal["safe", "notebook"] = "safe"
    rp_power_iters: int = Field(2, ge=0)
    mask_center: Literal["dc", "notebook"] = "dc"
    attention: AttentionPlacement = "last"


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _build(params: HyscanParams, shape: tuple[int, int, int], classes: int) -> dict[str, torch.nn.Module]:
    channels, h, w = shape
    _seed_everything(params.seed)
    common = {"widths": params.widths, "strides": params.strides, "blocks_per_stage": params.blocks_per_stage}
    hybrid = HybridNet(
        channels,
        (h, w),
        classes,
        attention_noise=params.attention_noise,
        branches=params.branches,
        gate_norm=params.gate_norm,
        conv_norm=params.conv_norm,
        rp_power_iters=params.rp_power_iters,
        rp_scale=params.rp_scale,
        mask_center=params.mask_center,
        attention=params.attention,
        seed=params.seed,
        **common,
    )
    _seed_everything(params.seed)
    return {"hybrid": hybrid, "baseline": PlainCNN(channels, (h, w), classes, **common)}


class HyscanStudy:
    """HySCAN ≙ HyCAS (Dhar et al.): certified + empirical robustness of a hybrid Lipschitz/stochastic network."""

    name: ClassVar[str] = "hyscan"
    summary: ClassVar[str] = (
        "HySCAN/HyCAS: 1-Lipschitz + stochastic hybrid CNN vs noise-trained CNN (smoothing, EOT-PGD)"
    )
    claim: ClassVar[str] = (
        "The hybrid network's certified accuracy at r=0.25 is at least the plain-CNN smoothing baseline's, its "
        "EOT-PGD accuracy is at least the baseline's + 2 points, its clean accuracy drops by at most 3 points, "
        "and every deterministic layer's operator norm is at most 1 (checked numerically)."
    )
    params_model: ClassVar[type[StudyParams]] = HyscanParams
    metric: ClassVar[str] = "hybrid/cert_acc_r025"
    mode: ClassVar[Literal["min", "max"]] = "max"

    def trainable(self, config: dict[str, Any]) -> None:
        params = HyscanParams.model_validate(config)
        torch.set_num_threads(1)
        _seed_everything(params.seed)
        started, cpu_started = time.perf_counter(), time.process_time()
        device = torch.device("cuda" if params.scale == "paper" and torch.cuda.is_available() else "cpu")
        data = load_split(params.dataset, params.n_test, params.seed, params.data_path)
        models = {k: m.to(device) for k, m in _build(params, data.image_shape, data.num_classes).items()}
        # each model's training and evaluation restarts the RNG, so the baseline of a (σ, seed) pair is the same
        # network whatever the hybrid's attention noise
        x_train, y_train = data.x_train.to(device), data.y_train.to(device)
        x_test, y_test = data.x_test.to(device), data.y_test.to(device)

        state = session.restore()
        metrics: dict[str, Any] = {}
        if state is not None:
            for key, model in models.items():
                model.load_state_dict(state[key])
                model.eval()
            metrics.update(state["train_metrics"])
        else:
            for index, (key, model) in enumerate(models.items()):
                _seed_everything(params.seed + 7919 * index)
                temperature = params.logit_temperature if key == "hybrid" else 1.0
                tic = time.process_time()
                loss = train_classifier(
                    model,
                    x_train,
                    y_train,
                    params.smoothing_sigma,
                    params.epochs,
                    params.batch_size,
                    params.lr,
                    temperature,
                )
                metrics[f"{key}/train_loss"] = loss
                metrics[f"{key}/train_cpu_s"] = time.process_time() - tic
            saved = {key: {k: v.cpu() for k, v in m.state_dict().items()} for key, m in models.items()}
            # Tune insists that every report carries the study metric; it is not measured until evaluation.
            session.report({**metrics, self.metric: float("nan")}, state={**saved, "train_metrics": dict(metrics)})

        for index, (key, model) in enumerate(models.items()):
            _seed_everything(params.seed + 7919 * index + 1)
            metrics.update(self._evaluate(key, model, params, x_test, y_test, data.num_classes))
        hybrid = models["hybrid"].cpu()
        metrics["hybrid/max_layer_norm"] = max(layer_norms(hybrid).values())
        metrics["hybrid/lipschitz_ratio"] = lipschitz_ratio(hybrid, data.x_test)
        metrics["time/trial_s"] = time.perf_counter() - started
        metrics["time/trial_cpu_s"] = time.process_time() - cpu_started
        session.report(metrics)

    @staticmethod
    def _evaluate(
        key: str, model: torch.nn.Module, params: HyscanParams, x: torch.Tensor, y: torch.Tensor, classes: int
    ) -> dict[str, float]:
        def predict(batch: torch.Tensor) -> torch.Tensor:
            return model(batch).argmax(dim=1)

        tic = time.process_time()
        with torch.no_grad():
            cert = certify(
                predict,
                x[: params.n_certify],
                params.smoothing_sigma,
                classes,
                params.n0,
                params.n_smooth,
                params.alpha,
                params.eval_batch,
            )
        toc = time.process_time()
        scale = params.logit_temperature if key == "hybrid" else 1.0
        attack = (params.attack_eps, params.attack_steps, params.eot_draws)
        x_att, y_att = x[: params.n_attack], y[: params.n_attack]
        if params.attack_loss == "worst":
            adv, per_loss = worst_case(model, x_att, y_att, *attack, logit_scale=scale)
        else:
            adv = eot_pgd_linf(model, x_att, y_att, *attack, params.attack_loss, scale)
            per_loss = {params.attack_loss: adv}
        out = {
            f"{key}/certify_cpu_s": toc - tic,
            f"{key}/attack_cpu_s": time.process_time() - toc,
            f"{key}/clean_acc": expected_accuracy(model, x, y, params.eval_draws, params.eval_batch),
            f"{key}/eot_pgd_acc": expected_accuracy(model, adv, y_att, params.eval_draws, params.eval_batch),
            f"{key}/abstain_rate": float(np.mean(cert.radius < 0)),
        }
        for kind, points in per_loss.items():
            out[f"{key}/eot_pgd_acc_{kind}"] = expected_accuracy(
                model, points, y_att, params.eval_draws, params.eval_batch
            )
        labels = y[: params.n_certify].cpu().numpy()
        for radius, acc in zip(RADII, cert.accuracy_at(labels, RADII), strict=True):
            out[cert_key(key, radius)] = acc
        return out

    def analyze(self, results: pd.DataFrame) -> Verdict:
        defaults = HyscanParams()
        table = plots.setting_means(results)
        evidence: dict[str, Any] = {
            "default_setting": {
                "smoothing_sigma": defaults.smoothing_sigma,
                "attention_noise": defaults.attention_noise,
            },
            "settings": table.round(4).to_dict(orient="records"),
        }
        at_default = results[
            np.isclose(results["smoothing_sigma"], defaults.smoothing_sigma)
            & np.isclose(results["attention_noise"], defaults.attention_noise)
        ]
        if at_default.empty:
            error = "no finished trial at the default smoothing_sigma/attention_noise"
            return verdict(self.claim, {}, evidence, error=error)
        mean = at_default.mean(numeric_only=True)

        def pair(metric: str) -> dict[str, float]:
            return {model: float(mean[f"{model}/{metric}"]) for model in MODELS}

        cert, eot, clean = pair("cert_acc_r025"), pair("eot_pgd_acc"), pair("clean_acc")
        max_norm = float(results["hybrid/max_layer_norm"].max())
        checks = {
            "cert_r025_hybrid_ge_baseline_minus_1pt": cert["hybrid"] >= cert["baseline"] - CERT_TOLERANCE,
            "eot_pgd_hybrid_ge_baseline_plus_2pts": eot["hybrid"] >= eot["baseline"] + EOT_GAIN,
            "clean_drop_le_3pts": clean["baseline"] - clean["hybrid"] <= CLEAN_DROP,
            "layer_norms_le_1": max_norm <= 1.0 + NORM_TOLERANCE,
        }
        evidence.update(
            {
                "seeds_at_default": sorted(int(s) for s in at_default["seed"].unique()),
                "cert_r025": cert,
                "eot_pgd_acc": eot,
                "clean_acc": clean,
                "max_layer_norm_all_trials": max_norm,
                "max_lipschitz_ratio_all_trials": float(results["hybrid/lipschitz_ratio"].max()),
                "tolerances": {
                    "cert": CERT_TOLERANCE,
                    "eot_gain": EOT_GAIN,
                    "clean_drop": CLEAN_DROP,
                    "norm": NORM_TOLERANCE,
                },
                "trials": len(results),
            }
        )
        paper = results[
            np.isclose(results["smoothing_sigma"], PAPER_SIGMA)
            & np.isclose(results["attention_noise"], defaults.attention_noise)
        ]
        if not paper.empty:
            at_paper = paper.mean(numeric_only=True)
            evidence["at_paper_sigma"] = {
                metric: {model: float(at_paper[f"{model}/{metric}"]) for model in MODELS}
                for metric in ("cert_acc_r025", "eot_pgd_acc", "clean_acc")
            }
        for kind in ("ce", "margin"):
            if f"hybrid/eot_pgd_acc_{kind}" in mean:
                evidence[f"eot_pgd_acc_{kind}_only"] = pair(f"eot_pgd_acc_{kind}")
        return verdict(self.claim, checks, evidence)

    def plot(self, results: pd.DataFrame, path: Path) -> None:
        defaults = HyscanParams()
        plots.plot_study(results, path, defaults.smoothing_sigma, defaults.attention_noise, RADII, cert_key)
