"""Knowledge-distillation losses as pure functions of logits (the KD methods the study compares).

Every loss takes student and teacher logits of shape (..., C) (a class distribution or an LM's vocabulary
distribution per token) and returns the mean over all leading positions as a scalar. Divergences are taken
between temperature-softened distributions p = softmax(teacher/T) and q = softmax(student/T) and scaled by
T² (Hinton et al.), so gradients keep their size across temperatures.

- `ce`: cross-entropy on hard labels only (no teacher);
- `kd`: forward KL(p ‖ q) (Hinton KD; "forward KL" in the LLM-KD literature);
- `rkl`: reverse KL(q ‖ p) (MiniLLM);
- `js`: Jensen–Shannon ½KL(p ‖ m) + ½KL(q ‖ m), m = ½(p + q);
- `skl`: skew KL(p ‖ αp + (1−α)q) (DistiLLM).

`hard_weight` > 0 adds that multiple of hard-label cross-entropy to any teacher loss. How this differs from the
paper: the paper interprets existing LLM-KD methods; which exact set it compares is not reachable, so this is
the set the method notes list [rec].
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

Method = Literal["ce", "kd", "rkl", "js", "skl"]
METHODS: tuple[str, ...] = ("ce", "kd", "rkl", "js", "skl")


def _kl(log_a: torch.Tensor, log_b: torch.Tensor) -> torch.Tensor:
    """(..., C) log-probabilities → (...) KL(a ‖ b)."""
    return (log_a.exp() * (log_a - log_b)).sum(dim=-1)


def cross_entropy(student_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """(..., C) logits, (...) long labels → scalar mean cross-entropy."""
    return F.cross_entropy(student_logits.reshape(-1, student_logits.shape[-1]), labels.reshape(-1))


def forward_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """(..., C) each → scalar T²·mean KL(p_T ‖ q_T)."""
    log_p = F.log_softmax(teacher_logits / temperature, dim=-1)
    log_q = F.log_softmax(student_logits / temperature, dim=-1)
    return temperature**2 * _kl(log_p, log_q).mean()


def reverse_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """(..., C) each → scalar T²·mean KL(q_T ‖ p_T)."""
    log_p = F.log_softmax(teacher_logits / temperature, dim=-1)
    log_q = F.log_softmax(student_logits / temperature, dim=-1)
    return temperature**2 * _kl(log_q, log_p).mean()


def _log_mixture(log_p: torch.Tensor, log_q: torch.Tensor, alpha: float) -> torch.Tensor:
    """log(α p + (1−α) q), computed stably."""
    weights = torch.log(torch.tensor([alpha, 1.0 - alpha], dtype=log_p.dtype))
    return torch.logsumexp(torch.stack((log_p + weights[0], log_q + weights[1])), dim=0)


def js_divergence(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """(..., C) each → scalar T²·mean JS(p_T, q_T)."""
    log_p = F.log_softmax(teacher_logits / temperature, dim=-1)
    log_q = F.log_softmax(student_logits / temperature, dim=-1)
    log_m = _log_mixture(log_p, log_q, 0.5)
    return temperature**2 * (0.5 * _kl(log_p, log_m) + 0.5 * _kl(log_q, log_m)).mean()


def skew_kl(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0, alpha: float = 0.1
) -> torch.Tensor:
    """(..., C) each → scalar T²·mean KL(p_T ‖ α p_T + (1−α) q_T); α = 0 is forward KL."""
    if not 0.0 <= alpha < 1.0:
        raise ValueError(f"skew alpha must be in [0, 1), got {alpha}")
    log_p = F.log_softmax(teacher_logits / temperature, dim=-1)
    log_q = F.log_softmax(student_logits / temperature, dim=-1)
    if alpha == 0.0:
        return temperature**2 * _kl(log_p, log_q).mean()
    return temperature**2 * _kl(log_p, _log_mixture(log_p, log_q, alpha)).mean()


def distillation_loss(
    method: Method,
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor | None,
    labels: torch.Tensor,
    temperature: float = 2.0,
    hard_weight: float = 0.0,
    skew: float = 0.1,
) -> torch.Tensor:
    """The training loss of one KD method: (..., C) logits, (...) labels → scalar."""
    if method == "ce":
        return cross_entropy(student_logits, labels)
    if teacher_logits is None:
        raise ValueError(f"method {method!r} needs teacher logits")
    if method == "kd":
        loss = forward_kl(student_logits, teacher_logits, temperature)
    elif method == "rkl":
        loss = reverse_kl(student_logits, teacher_logits, temperature)
    elif method == "js":
        loss = js_divergence(student_logits, teacher_logits, temperature)
    elif method == "skl":
        loss = skew_kl(student_logits, teacher_logits, temperature, skew)
    else:
        raise ValueError(f"unknown KD method {method!r}; expected one of {METHODS}")
    if hard_weight > 0.0:
        loss = loss + hard_weight * cross_entropy(student_logits, labels)
    return loss
