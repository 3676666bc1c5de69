"""SemanticNVS: semantic features inside a camera-conditioned diffusion model for novel view synthesis.

Procedural rooms ray-cast from a source and a target camera (`scenes.py`), the frozen semantic encoder Φ and the
denoiser with its three conditioning variants (`model.py`), training, DDIM sampling with the semantic alternation
and the evaluation by camera distance (`train.py`), and the study (`study.py`).
"""

from raygent.jobs.semantic_nvs.study import SemanticNVSParams, SemanticNVSStudy

__all__ = ["SemanticNVSParams", "SemanticNVSStudy"]
