"""Feature-learning strength (FLS) study: optimal init scale under early stopping at a target train loss."""

from raygent.jobs.fls.study import FLSParams, FLSStudy

__all__ = ["FLSParams", "FLSStudy"]
