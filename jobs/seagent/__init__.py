"""SEAgent: a web agent that teaches itself an unfamiliar app (World State Model, curriculum, GRPO + AI)."""
