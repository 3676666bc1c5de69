"""ReasonAug's model-aware gated reward (`magr.py`) and the ReID model it trains (`reid.py`)."""
