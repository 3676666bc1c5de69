# The two commands of the README. Both set up first (scripts/setup.sh; fast when nothing changed).
.PHONY: setup demo test lint bench clean

VENV := .venv
BIN := $(VENV)/bin

setup:
	@bash scripts/setup.sh

demo: setup
	$(BIN)/raygent sweep fls

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy platform

test: lint
	$(BIN)/python -m pytest tests

bench: setup
	$(BIN)/python bench/tune_overhead.py

clean:
	rm -rf runs build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
