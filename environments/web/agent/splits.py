"""The web agent's seed split, in a leaf module so the task source (`tasks.py`) and the environment's hindsight
goals (`hindsight.py`) share it without an import cycle (tasks → demos → env → hindsight)."""

TRAIN_POOL = 512
"""Train seeds are below this; a held-out task's parameters differ from those of every one of them."""
HELDOUT_START = 1_000_000
"""Held-out seeds start here."""
