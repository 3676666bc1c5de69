# The two commands of the README. Both set up first (scripts/setup.sh; fast when nothing changed).
.PHONY: setup demo test test-fast lint bench clean

VENV := .venv
BIN := $(VENV)/bin

setup:
	@bash scripts/setup.sh

# The web agent: SFT on four web apps' scripted experts, then GRPO on the fifth (the media player), with a
# progress display; at most 15 minutes on 2 cores. The last line says where the report is.
DEMO_RUN := runs/web_agent/demo-$(shell date +%Y%m%d-%H%M%S)

demo: setup
	$(BIN)/raygent run web_agent --out $(DEMO_RUN)
	@echo "report: $(abspath $(DEMO_RUN))/report.html"

# ruff, mypy over every package, and the layering contracts (import-linter)
lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy platform policies environments rewards jobs
	$(BIN)/python scripts/lint_imports.py

# Two passes. Tests that start a Ray cluster (`ray`, `vllm`) run one at a time: two clusters started at once from
# pytest-xdist workers broke each other's GCS start (token auth). The rest, browser tests included, run on
# PYTEST_WORKERS processes (a file's tests stay together, so a module's fixtures run once). Both passes always run.
PYTEST_WORKERS ?= 2
SERIAL := ray or vllm

test: lint
	$(BIN)/python -m pytest tests -m "not ($(SERIAL))" -n $(PYTEST_WORKERS) --dist loadfile; a=$$?; \
	$(BIN)/python -m pytest tests -m "$(SERIAL)"; b=$$?; test $$a -eq 0 -a $$b -eq 0

# The edit loop (under 3 minutes on 2 cores): no Ray clusters, browsers, vLLM engines or slow tests, no lint.
test-fast: setup
	$(BIN)/python -m pytest tests -m "not slow and not ray and not browser and not vllm" -q -n $(PYTEST_WORKERS) --dist loadfile

bench: setup
	$(BIN)/python bench/tune_overhead.py

clean:
	rm -rf runs build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
