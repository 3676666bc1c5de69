"""Expert-guided clinical text augmentation via query-based model collaboration (a weak domain expert + a strong
generalist), against the generalist alone and EDA, on synthetic discharge notes.

Notes with tagged critical entities and the readmission label (`notes.py`), the expert, the generalist stand-in,
EDA and the collaboration loop (`augment.py`), and the study (`study.py`).
"""

from raygent.jobs.clinical_aug.study import ClinicalAugParams, ClinicalAugStudy

__all__ = ["ClinicalAugParams", "ClinicalAugStudy"]
