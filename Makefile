# The README's whole quick start: `make course` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: course test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# Execute every notebook into build/course/ (.ipynb + .html) and print the times.
course: $(STAMP)
	$(PY) -m nanohermes_nb.course

# The whole test suite, executed notebooks included.
test: $(STAMP)
	$(PY) -m pytest -q

# Benchmarks (figures quoted in the README); not part of the tests.
bench: $(STAMP)
	$(PY) bench/bench_sweep.py
	$(PY) bench/bench_views.py

clean:
	rm -rf build $(VENV)
