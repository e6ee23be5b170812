# evaldsl — two commands on a fresh machine:
#   make run    create .venv, install evaldsl, run the examples and print the result
#   make test   create .venv with the dev extra, then lint, type-check and run every test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test lint typecheck pytest bench clean tables

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

run: $(STAMP)
	$(BIN)/evaldsl run examples

test: $(DEV_STAMP) lint typecheck pytest

lint: $(DEV_STAMP)
	$(BIN)/ruff check evaldsl tests benchmarks
	$(BIN)/ruff format --check evaldsl

typecheck: $(DEV_STAMP)
	$(BIN)/mypy evaldsl

pytest: $(DEV_STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py
	$(BIN)/python benchmarks/history_bench.py
	$(BIN)/python benchmarks/speed.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

tables: $(STAMP)
	$(BIN)/python -c "from evaldsl.syntax.grammar import write_tables; print('wrote', write_tables())"
