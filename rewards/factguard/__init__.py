"""FactGuard's decision-aware verdict reward (`decision_aware.py`)."""
