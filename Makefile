# evaldsl — two commands on a fresh machine:
#   make run    create .venv, install evaldsl, run the examples and print the result
#   make test   create .venv with the dev extra, then lint, type-check and run every test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

CHROMIUM := /usr/bin/chromium

.PHONY: run test lint typecheck pytest fuzz bench bench-score browser screenshot clean tables

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

# node and npm run the JavaScript references of the tests (tests/test_jsref.py,
# tests/test_textmate.py); a fresh machine running as root (the CI machine) gets Debian's
NODE_STAMP := $(VENV)/.node-checked
$(NODE_STAMP): | $(BIN)/python
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq nodejs npm; \
	  else \
	    echo "note: install nodejs and npm, or the JavaScript reference tests skip"; \
	  fi; \
	fi
	@touch $@

run: $(STAMP)
	$(BIN)/evaldsl run examples

test: $(DEV_STAMP) browser lint typecheck pytest

lint: $(DEV_STAMP)
	$(BIN)/ruff check evaldsl tests benchmarks
	$(BIN)/ruff format --check evaldsl tests benchmarks

typecheck: $(DEV_STAMP)
	$(BIN)/mypy evaldsl

# Two pytest-xdist workers, one a core of the 2-core machine `make test` is sized for: the
# tests are mostly CPU-bound (property tests, parse loops, subprocesses of the command), so
# two take ~6 of the ~9 minutes one takes. `make pytest JOBS=0` runs them in this process.
JOBS ?= 2
pytest: $(DEV_STAMP) $(NODE_STAMP) browser
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal

# The HTML report's tests open it in Debian's chromium (driven by Playwright, which never
# downloads a browser of its own). As root, as on CI and a fresh machine, a missing one is
# installed; elsewhere the test says what to install (and fails instead when CI=true).
browser:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's chromium for the HTML report's browser tests"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium >/dev/null 2>&1 \
			|| { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium >/dev/null; }; \
	fi

# docs/html-report.png, the README's picture: the browser test's screenshot, kept
screenshot: $(DEV_STAMP) browser
	EVALDSL_UPDATE_SCREENSHOT=1 $(BIN)/python -m pytest tests/test_html_report.py -q \
		-k failing_examples_in_the_browser

# Every property test (Hypothesis's, `-m hypothesis`) drawing FUZZ times its own count of
# examples, on new random examples each time (tests/fuzzing.py); a failure prints its
# example and the `@reproduce_failure` blob that replays it, and is kept in .hypothesis/
# so the next run tries it first. FUZZ=20 takes 15-25 minutes on 2 cores.
FUZZ ?= 20
fuzz: $(DEV_STAMP) $(NODE_STAMP)
	EVALDSL_FUZZ=$(FUZZ) $(BIN)/python -m pytest -m hypothesis -n auto -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py
	$(BIN)/python benchmarks/history_bench.py
	$(BIN)/python benchmarks/speed.py
	$(BIN)/python benchmarks/growth.py
	$(BIN)/python benchmarks/many_tools.py
	$(BIN)/python benchmarks/long_answers.py
	$(BIN)/python benchmarks/shared_recordings.py
	$(BIN)/python benchmarks/formats.py
	$(BIN)/python benchmarks/judge_runs.py

bench-score: $(DEV_STAMP)
	$(BIN)/python benchmarks/score_bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

tables: $(STAMP)
	$(BIN)/python -c "from evaldsl.syntax.grammar import write_tables; print('wrote', write_tables())"
