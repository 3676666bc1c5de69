"""MAGR, the model-aware gated reward of ReasonAug, and the closed loop's ReID model (issue 21, second half).

The reward model judges one-step augmentation episodes (`environments/reasonaug`): each trajectory's last step
carries the anchor image x and the generator's edit x' = G(x, u) of the policy's instruction u. With f the ReID
model being trained (owned here) and f_0 a frozen reference ReID model (the identity judge), per episode:

    s_id   = cos(f_0(x), f_0(x'))                                   identity preservation
    gate   = 1{s_id >= tau}  (hard) | sigmoid((s_id - tau) / T) (soft) | 1 (off: the ablation)
    hard   = clip(d(f(x), f(x')) - mean_{x+} d(f(x), f(x+)), -c, c)   x+: the anchor's other real views
    neg    = lambda_neg * min(0, min_n d(f(x'), f(n)) - d(f(x'), f(x)) - margin)   n: real views of other identities
    R      = alpha * s_id + gate * (hard + neg)                     (an unparsable instruction: invalid_reward)

so "hardness" for the current model pays only when the identity survives the edit (method notes §5.2, a
reconstruction). An episode is *accepted* when its instruction parsed and its gate passed (s_id >= tau; every valid
one with `gate: off`; none with `accept: none`, the no-augmentation baseline); its judgement's `success` says so.

The closed loop: accepted edits join a pool labelled with the anchor's identity, and every `retrain_every` judge
calls (= policy steps: the run has one reward actor) f is trained `reid.round_steps` triplet steps on the real views
plus the pool, then evaluated (mAP, Rank-1 on the held-out query/gallery; never used by the reward) and the round is
appended to `STATE_DIR/reid.jsonl`. So the rewards of the next K steps are computed with the updated f. After every
call the actor saves f, its optimizer, the pool and its counters to `STATE_DIR/loop.pt`; a restarted actor (the
run's `reward.resources` carry `max_restarts`) resumes from there. `STATE_DIR/magr.jsonl` gets one line of
statistics per call (acceptance, gate, hardness, and the share of identity-changing edits among the accepted, from
the environment's ground truth, which the reward never reads).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from raygent.platform.contracts import Judgement, Trajectory
from raygent.rewards.reasonaug.reid import (
    IMAGE_SHAPE,
    ReIDSettings,
    concat,
    decode_image,
    embed,
    evaluate,
    load_model,
    make_optimizer,
    train_steps,
)

REFERENCE_FILE = "reference.pt"
INITIAL_FILE = "initial.pt"
LOOP_FILE = "loop.pt"
ROUNDS_FILE = "reid.jsonl"
CALLS_FILE = "magr.jsonl"


class MAGRSettings(BaseModel):
    """`reward.kwargs` of MAGR (module docstring). `data` and `state_dir` are filled in by the recipe."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tau: float = Field(default=0.9, ge=-1.0, le=1.0)
    gate: Literal["hard", "soft", "off"] = "hard"
    gate_temperature: float = Field(default=0.02, gt=0)
    alpha: float = Field(default=0.5, ge=0)
    lambda_neg: float = Field(default=0.5, ge=0)
    margin: float = Field(default=0.1, ge=0)
    hardness_clip: float = Field(default=1.0, gt=0)
    invalid_reward: float = -1.0
    accept: Literal["gated", "none"] = "gated"
    retrain_every: int = Field(default=4, ge=1)
    reid: ReIDSettings = ReIDSettings()
    seed: int = 0
    data: str | None = None
    """The `.npz` of real views, query/gallery and judge views (`environments/reasonaug/data.py`)."""
    state_dir: str | None = None
    """Where the recipe put `reference.pt` and `initial.pt`, and where the loop keeps its state and records."""


def gate_value(s_id: np.ndarray, settings: MAGRSettings) -> np.ndarray:
    if settings.gate == "off":
        return np.ones_like(s_id)
    if settings.gate == "hard":
        return (s_id >= settings.tau).astype(np.float64)
    return 1.0 / (1.0 + np.exp(-(s_id - settings.tau) / settings.gate_temperature))


def magr_scores(
    f_x: torch.Tensor,
    f_xp: torch.Tensor,
    r_x: torch.Tensor,
    r_xp: torch.Tensor,
    labels: np.ndarray,
    real_f: torch.Tensor,
    real_y: np.ndarray,
    settings: MAGRSettings,
) -> dict[str, np.ndarray]:
    """The reward's parts for a batch of valid episodes: features of anchors and edits under the current model
    (`f_x`, `f_xp`) and the reference (`r_x`, `r_xp`), the anchors' labels, the real views' features and labels."""
    s_id = (r_x * r_xp).sum(dim=1).numpy().astype(np.float64)
    d_edit = torch.linalg.norm(f_x - f_xp, dim=1).numpy()
    d_real = torch.cdist(f_x, real_f).numpy()  # anchor to every real view
    d_edit_real = torch.cdist(f_xp, real_f).numpy()  # edit to every real view
    same = labels[:, None] == real_y[None, :]
    positive = same & (d_real > 1e-6)  # the anchor's other views (the anchor itself is a real view)
    d_pos = np.where(positive.any(1), (d_real * positive).sum(1) / np.maximum(positive.sum(1), 1), 0.0)
    hard = np.clip(d_edit - d_pos, -settings.hardness_clip, settings.hardness_clip)
    d_neg = np.where(~same, d_edit_real, np.inf).min(axis=1)
    neg = settings.lambda_neg * np.minimum(0.0, d_neg - d_edit - settings.margin)
    gate = gate_value(s_id, settings)
    score = settings.alpha * s_id + gate * (hard + neg)
    accepted = s_id >= settings.tau if settings.gate != "off" else np.ones_like(s_id, dtype=bool)
    if settings.accept == "none":
        accepted = np.zeros_like(s_id, dtype=bool)
    return {"s_id": s_id, "gate": gate, "hard": hard, "neg": neg, "score": score, "accepted": accepted}


def _save_atomic(obj: Any, path: Path) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


class MAGR:
    """The reward model (module docstring); `reward.entry: raygent.rewards.reasonaug.magr:MAGR`, one actor."""

    Settings = MAGRSettings

    def __init__(self, **kwargs: Any) -> None:
        self.settings = MAGRSettings.model_validate(kwargs)
        if self.settings.data is None or self.settings.state_dir is None:
            raise ValueError("MAGR needs reward.kwargs.data and state_dir (the reasonaug recipe fills them in)")
        torch.set_num_threads(self.settings.reid.threads)
        self.state_dir = Path(self.settings.state_dir)
        with np.load(self.settings.data) as arrays:
            self.arrays = {key: arrays[key] for key in arrays.files}
        reid = self.settings.reid
        self.reference = load_model(torch.load(self.state_dir / REFERENCE_FILE, weights_only=True), reid)
        loop_file = self.state_dir / LOOP_FILE
        self.restored = loop_file.exists()
        if self.restored:  # a restarted actor continues the loop where its last call left it
            state = torch.load(loop_file, weights_only=False)
            self.model = load_model(state["model"], reid)
            self.optimizer = make_optimizer(self.model, reid)
            self.optimizer.load_state_dict(state["optimizer"])
            self.pool_x, self.pool_y = state["pool_x"], state["pool_y"]
            self.pool_changed = state["pool_changed"]
            self.calls, self.rounds = int(state["calls"]), int(state["rounds"])
        else:
            self.model = load_model(torch.load(self.state_dir / INITIAL_FILE, weights_only=True), reid)
            self.optimizer = make_optimizer(self.model, reid)
            self.pool_x = np.zeros((0, *IMAGE_SHAPE), dtype=np.uint8)
            self.pool_y = np.zeros(0, dtype=np.int64)
            self.pool_changed = np.zeros(0, dtype=bool)
            self.calls, self.rounds = 0, 0

    # -- judging ----------------------------------------------------------------------------------------------

    def judge(self, trajectories: Sequence[Trajectory]) -> list[Judgement]:
        begin = time.perf_counter()
        infos = [t.steps[-1].info if t.steps else {} for t in trajectories]
        valid = [i for i, info in enumerate(infos) if info.get("valid_action") and "edited" in info]
        judgements = [
            Judgement(score=self.settings.invalid_reward, success=False, reason="instruction did not parse")
            for _ in trajectories
        ]
        parts: dict[str, np.ndarray] = {}
        if valid:
            x = np.stack([decode_image(infos[i]["anchor"]) for i in valid])
            xp = np.stack([decode_image(infos[i]["edited"]) for i in valid])
            labels = np.array([int(infos[i]["label"]) for i in valid])
            real_x, real_y = self.arrays["train_x"], self.arrays["train_y"]
            parts = magr_scores(
                embed(self.model, x),
                embed(self.model, xp),
                embed(self.reference, x),
                embed(self.reference, xp),
                labels,
                embed(self.model, real_x),
                real_y,
                self.settings,
            )
            changed = np.array([bool(infos[i].get("identity_changed", False)) for i in valid])
            for row, i in enumerate(valid):
                judgements[i] = Judgement(
                    score=float(parts["score"][row]),
                    success=bool(parts["accepted"][row]),
                    reason="accepted" if parts["accepted"][row] else "rejected by the identity gate",
                    info={key: float(parts[key][row]) for key in ("s_id", "gate", "hard", "neg")},
                )
            keep = parts["accepted"]
            self.pool_x = concat([self.pool_x, xp[keep]], IMAGE_SHAPE, np.uint8)
            self.pool_y = concat([self.pool_y, labels[keep]], (), np.int64)
            self.pool_changed = concat([self.pool_changed, changed[keep]], (), bool)
            start = max(len(self.pool_x) - self.settings.reid.pool_max, 0)  # keep the newest pool_max
            self.pool_x, self.pool_y = self.pool_x[start:], self.pool_y[start:]
            self.pool_changed = self.pool_changed[start:]
        self.calls += 1
        self._record_call(trajectories, valid, parts, infos, time.perf_counter() - begin)
        if self.calls % self.settings.retrain_every == 0:
            self.retrain()
        self._save()
        return judgements

    def _record_call(
        self,
        trajectories: Sequence[Trajectory],
        valid: list[int],
        parts: dict[str, np.ndarray],
        infos: list[dict[str, Any]],
        seconds: float,
    ) -> None:
        n = max(len(trajectories), 1)
        record: dict[str, Any] = {"call": self.calls, "episodes": len(trajectories), "valid": len(valid) / n}
        if valid:
            changed = np.array([bool(infos[i].get("identity_changed", False)) for i in valid])
            accepted = parts["accepted"]
            record.update(
                accepted=float(accepted.sum()) / n,
                identity_changed=float(changed.mean()),
                s_id=float(parts["s_id"].mean()),
                s_id_kept=float(parts["s_id"][~changed].mean()) if (~changed).any() else math.nan,
                s_id_changed=float(parts["s_id"][changed].mean()) if changed.any() else math.nan,
                hard=float(parts["hard"].mean()),
                score=float(parts["score"].mean()),
                changed_accepted=float((changed & accepted).sum() / max(accepted.sum(), 1)),
                changed_rejected=float((changed & ~accepted).sum() / max(changed.sum(), 1)),
            )
        record["pool"] = len(self.pool_x)
        record["seconds"] = seconds
        with (self.state_dir / CALLS_FILE).open("a") as handle:
            handle.write(json.dumps(record) + "\n")

    # -- the closed loop --------------------------------------------------------------------------------------

    def retrain(self) -> dict[str, float]:
        """One round: f trained on the real views plus the pool, evaluated, recorded."""
        begin = time.perf_counter()
        reid, arrays = self.settings.reid, self.arrays
        images = concat([arrays["train_x"], self.pool_x], IMAGE_SHAPE, np.uint8)
        labels = concat([arrays["train_y"], self.pool_y], (), np.int64)
        rng = np.random.default_rng([self.settings.seed, self.rounds, 7])
        loss = train_steps(self.model, self.optimizer, images, labels, reid.round_steps, reid, rng)
        self.rounds += 1
        metrics = evaluate(self.model, arrays["query_x"], arrays["query_y"], arrays["gallery_x"], arrays["gallery_y"])
        record = {
            "round": self.rounds,
            "call": self.calls,
            "pool": len(self.pool_x),
            "pool_identity_changed": float(self.pool_changed.mean()) if len(self.pool_changed) else 0.0,
            "loss": loss,
            **metrics,
            "seconds": time.perf_counter() - begin,
        }
        with (self.state_dir / ROUNDS_FILE).open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        return metrics

    def _save(self) -> None:
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "pool_x": self.pool_x,
            "pool_y": self.pool_y,
            "pool_changed": self.pool_changed,
            "calls": self.calls,
            "rounds": self.rounds,
        }
        _save_atomic(state, self.state_dir / LOOP_FILE)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
