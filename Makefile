# trainjobs — every command a developer or CI runs. `make test` is what CI runs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test lint typecheck layers unit bench clean install graphviz docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Runtime install: enough for `make demo` and `trainjobs` itself.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

# Dev install: linters, type checker and test tools.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

## demo: render the demo stack, print what it would create and where the YAML went
demo: $(VENV)/.installed
	$(BIN)/trainjobs render stacks/Pulumi.demo.yaml -o out/demo

lint: $(STAMP)
	$(BIN)/ruff check trainjobs tests bench examples policy __main__.py
	$(BIN)/ruff format --check trainjobs tests bench examples policy __main__.py

typecheck: $(STAMP)
	$(BIN)/mypy

layers: $(STAMP)
	$(BIN)/lint-imports

# Graphviz's dot draws `trainjobs graph -o FILE.svg`; the graph tests draw every stack.
graphviz:
	@command -v dot >/dev/null || { \
	  if command -v apt-get >/dev/null; then \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq graphviz >/dev/null; \
	  else echo "install Graphviz (its dot command), e.g. brew install graphviz" >&2; exit 1; fi; }

unit: $(STAMP) graphviz
	$(BIN)/pytest

## docs: redraw the pictures the README shows (a test fails when they are stale)
docs: $(VENV)/.installed graphviz
	$(BIN)/trainjobs graph stacks/Pulumi.demo.yaml -o docs/demo-stack.svg

## test: everything CI runs
test: lint typecheck layers unit

## bench: the benchmark table (cdk8s, which runs on Node.js, is installed for the comparison)
bench: $(STAMP)
	$(BIN)/pip install --quiet cdk8s
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 $(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) out .mypy_cache .ruff_cache .pytest_cache .hypothesis
