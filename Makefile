PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-ray lint docs bench venv clean wheel-check

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip uninstall --quiet --yes quiver 2>/dev/null || true  # the distribution's name before quiver-dataflow
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m examples.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check quiver tests benchmarks examples
	$(VENV)/bin/mypy

# The API reference, from the docstrings, into docs/api/_build/index.html; any warning (a broken reference, bad
# markup) fails it.
docs: $(STAMP)
	$(VENV)/bin/sphinx-build -W -n -b html docs/api docs/api/_build

test: $(STAMP)
	scripts/system-packages
	$(PY) -m pytest tests

# The compat and e2e suites again on a local Ray (about ten minutes): CI runs it after `make test`.
test-ray: $(STAMP)
	QUIVER_TEST_MASTER=ray $(PY) -m pytest tests/compat tests/e2e

# The built wheel in a fresh venv of its own (the plain `pip install`): import, CLI, the README's core snippets.
wheel-check: $(STAMP)
	scripts/wheel-check

bench: $(STAMP)
	$(PY) -m benchmarks.core --rows 10000000

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache demo-data docs/api/_build
