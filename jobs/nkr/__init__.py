"""NKR: a long video encoded once as a LoRA-like Neural Knowledge Representation on a frozen backbone.

Symbolic long videos, the oracle captioner and the agent's QA synthesis (`video.py`), the frozen backbone and its
one-time pre-training to read captions (`base.py`), Agentic Knowledge Distillation into a LoRA adapter, answering
and the baselines (`knowledge.py`), and the study (`study.py`).
"""

from raygent.jobs.nkr.study import NkrParams, NkrStudy

__all__ = ["NkrParams", "NkrStudy"]
