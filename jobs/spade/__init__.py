"""SPADE: Support-Proximity Augmented Diffusion Estimation for offline black-box optimisation.

A conditional DDPM over the score y given a design x is trained with two extra terms on the mean and
spread of its own DDIM samples (Calibrated Diffusion Estimation and Support-Proximity Regularisation);
an evolutionary search then maximises a lower confidence bound of that surrogate. The study is the
paper's calibration × support ablation. See `study.py` for the claim and `params.py` for every knob.
"""
