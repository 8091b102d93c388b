# metaeval: `make demo` runs the main job, `make test` the test suite (both create .venv first).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_DIR ?= demo-output
TORCH_VERSION ?= 2.13.0
export OPENBLAS_THREAD_TIMEOUT := 1

.PHONY: demo test test-slow bench datasets clean

# the package alone (enough for `make demo`)
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

# the package with every extra the tests exercise; the CPU build of torch first, so that no
# dependency pulls a CUDA build
$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet torch==$(TORCH_VERSION)
	$(PY) -m pip install --quiet -e '.[test,embed,js,dask,fast]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/metaeval report --dataset summeval --human expert.relevance --output $(DEMO_DIR)

# the suite in PYTEST_WORKERS processes (pytest-xdist; each test file whole on one worker, so that a module's
# fixtures are built once and its tests keep their order); PYTEST_WORKERS=0 runs it in this process
PYTEST_WORKERS ?= 2
test: $(VENV)/.installed-test
	$(PY) -m pytest -q -rs -n $(PYTEST_WORKERS) --dist loadfile

test-slow: $(VENV)/.installed-test
	$(PY) -m pytest -q -m slow

bench: $(VENV)/.installed-test
	$(PY) benchmarks/run_all.py

datasets: $(VENV)/.installed
	$(PY) scripts/build_datasets.py --shared ../shared/data

clean:
	rm -rf $(VENV) $(DEMO_DIR) build *.egg-info src/*.egg-info
