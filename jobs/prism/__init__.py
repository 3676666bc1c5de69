"""PRISM [rec]: depth-sensor noise synthesis separating sensing invalidation from measurement inaccuracy.

The paper could not be found; `study.py` is a reconstruction from its one-line description and related work
(docs/studies.md). Generated scenes and a sensor oracle (`scenes.py`), a U-Net noise model with dual or single
heads and positive-prioritised hierarchical mask supervision (`model.py`), training, synthesis, metrics and the
downstream classifier (`train.py`).
"""

from raygent.jobs.prism.study import PrismParams, PrismStudy

__all__ = ["PrismParams", "PrismStudy"]
