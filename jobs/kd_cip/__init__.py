"""KD through Harsanyi interactions and the Complex Interaction Penalty (CIP): a Tune study."""

from raygent.jobs.kd_cip.study import KDCIPParams, KDCIPStudy

__all__ = ["KDCIPParams", "KDCIPStudy"]
