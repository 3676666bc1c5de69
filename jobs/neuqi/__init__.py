"""NeUQI (arXiv 2505.17595) as a Tune study: quantizer inits, a tiny LM to quantise, and the study class."""
