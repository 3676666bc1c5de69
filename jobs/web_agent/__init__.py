"""web_agent: SFT of a tiny LM agent on four web apps' scripted experts, then GRPO on the fifth (see `recipe.py`)."""
