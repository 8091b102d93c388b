# metaeval: `make demo` runs the main job, `make test` the test suite (both create .venv first).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_DIR ?= demo-output
export OPENBLAS_THREAD_TIMEOUT := 1

.PHONY: demo test test-slow bench datasets clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/metaeval report --dataset summeval --human expert.relevance --output $(DEMO_DIR)

test: $(VENV)/.installed
	$(PY) -m pytest -q

test-slow: $(VENV)/.installed
	$(PY) -m pytest -q -m slow

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/run_all.py

datasets: $(VENV)/.installed
	$(PY) scripts/build_datasets.py --shared ../shared/data

clean:
	rm -rf $(VENV) $(DEMO_DIR) build *.egg-info src/*.egg-info
