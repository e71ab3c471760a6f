# The README's quick start: `make course` and `make test` (and `make lab` to open the course).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_STAMP := $(VENV)/.lab-installed
LAB_ARGS ?=

.PHONY: course test test-fast lint lab figure bench clean ccusage

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,site]'
	printf '#!/bin/sh\n# made by make: the CLI of this checkout (.venv/bin/nanohermes-nb)\nexec "$$(dirname "$$0")/$(VENV)/bin/nanohermes-nb" "$$@"\n' > nanohermes-nb
	chmod +x nanohermes-nb
	touch $(STAMP)

# `./nanohermes-nb ...` runs the command line of this checkout (the README's examples).
nanohermes-nb: $(STAMP)

# JupyterLab in the same .venv; the notebooks' python3 kernel is registered as this .venv's Python.
$(LAB_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,site,lab]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (nanohermes_nb)"
	touch $(LAB_STAMP)

# Execute every notebook (into build/executed/) and print the times, then build the course site with MkDocs:
# build/course/ (course, docs, API reference) and build/course/zh/ (the Chinese edition), all offline;
# also redraws docs/ledger_vs_article.png when the data it plots has changed.
course: $(STAMP)
	$(PY) -m nanohermes_nb.course

# The whole test suite, executed notebooks and the browser check included (what CI runs).
test: $(STAMP)
	$(PY) -m pytest -q

# Everything but the slow tier (notebook execution, the browser, many-subprocess tests): about a minute.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

# Lint and types, as CI runs them (configured in pyproject.toml).
lint: $(STAMP)
	$(PY) -m ruff check nanohermes_nb tests bench data/make_sessions.py
	$(PY) -m mypy

# Open the course in JupyterLab (LAB_ARGS=--no-browser for a remote machine).
lab: $(LAB_STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# Redraw the README's picture whatever its state.
figure: $(STAMP)
	$(PY) -m nanohermes_nb.course --figure

# Benchmarks (figures quoted in the README, each a ratio measured side by side in one run); not part
# of the tests. BENCH_ARGS=--quick shortens bench_engine's memory run (10,000 transcripts, about 5 minutes).
BENCH_ARGS ?=
bench: $(STAMP)
	$(PY) bench/bench_engine.py $(BENCH_ARGS)
	$(PY) bench/bench_sweep.py
	$(PY) bench/bench_views.py
	$(PY) bench/bench_pricing.py
	$(PY) bench/bench_agent.py
	$(PY) bench/bench_hostile.py
	$(PY) bench/bench_peer_hermes.py
	$(PY) bench/bench_peer_langchain.py
	$(PY) bench/bench_peer_openhands.py

# ccusage (npm, pinned in tools/ccusage/package.json) for the parity tests of the reported usage against
# what ccusage counts; installed into .tools/npm (git-ignored). Without npm it says so and the tests skip.
CCUSAGE_STAMP := .tools/npm/.installed
ccusage: $(CCUSAGE_STAMP)
$(CCUSAGE_STAMP): tools/ccusage/package.json
	@if command -v npm >/dev/null 2>&1; then \
	    mkdir -p .tools/npm && cp tools/ccusage/package.json .tools/npm/package.json && \
	    npm install --prefix .tools/npm --no-audit --no-fund --loglevel=error --no-package-lock >/dev/null && \
	    touch $(CCUSAGE_STAMP); \
	else echo "ccusage: npm not found; the ccusage parity tests will be skipped"; fi

clean:
	rm -rf build $(VENV) nanohermes-nb .tools
