"""Clipped asynchronous SGD under stragglers and sub-Weibull noise (Erickson & Johansson, arXiv 2606.13287).

Modules: `objective` (f), `noise` (sub-Weibull oracle), `method` (the clipped update), `simulator`
(event-driven ASGD with exact delays), `runner` (one replicate, simulated or on the Ray parameter server),
`params`, `study` (the `TuneStudy`), `plots`.
"""
