"""HySCAN (≙ HyCAS, Dhar et al.): hybrid 1-Lipschitz + stochastic defence, certified by randomized smoothing."""
