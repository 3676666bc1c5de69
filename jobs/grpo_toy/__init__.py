"""grpo_toy: the RL core's proof job — SFT on ToolCalc expert demonstrations, then GRPO (see `recipe.py`)."""
