"""4RC: encode a monocular (here RGB-D) video once, then query the 3D position of any frame's pixels at any time.

Generated dynamic scenes with analytic trajectories (`scenes.py`), the encoder and the conditional query decoder,
factorised (base geometry + relative motion) or direct (`model.py`), training, evaluation and costs (`train.py`),
and the study (`study.py`).
"""

from raygent.jobs.four_rc.study import FourRCParams, FourRCStudy

__all__ = ["FourRCParams", "FourRCStudy"]
