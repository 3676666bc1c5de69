"""reasonaug: a closed-loop augmentation policy for person re-identification, GRPO on a model-aware gated reward
(see `recipe.py`)."""
