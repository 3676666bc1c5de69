"""UrbanMLLM: joint satellite and street-view understanding with a cross-view perceiver and interleaved documents.

SynthCity cities and their satellite tiles and street views (`city.py`), the vocabulary, urban documents and the
four tasks (`tokens.py`), the view encoders, the cross-view perceiver and the tiny Llama (`model.py`), pre-training,
instruction tuning and evaluation (`train.py`), and the study (`study.py`).
"""

from raygent.jobs.urban_mllm.study import UrbanMLLMParams, UrbanMLLMStudy

__all__ = ["UrbanMLLMParams", "UrbanMLLMStudy"]
