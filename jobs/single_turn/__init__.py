"""single_turn: GRPO on a single-turn task given as a prompt source and a reward function (see `recipe.py`)."""
