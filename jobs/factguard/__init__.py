"""factguard: a claim-verification agent with agent-side tools, SFT on oracle traces then GRPO with a
decision-aware reward (see `recipe.py`)."""
