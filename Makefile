# trainjobs — every command a developer or CI runs. `make test` is what CI runs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
# Every Python package at the version the last green run used (constraints.txt).
PIP    := $(BIN)/pip install --quiet -c constraints.txt
PROOFS := $(VENV)/.installed-proofs
# Debian packages the run-local proofs use: Open MPI (mpirun, and headers for mpi4py)
# and a Redis server.
DEBS   := openmpi-bin libopenmpi-dev redis-server
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo demo-down test lint typecheck layers unit bench bench-cluster clean install graphviz docs proof-deps system-deps cluster constraints sdk node-deps go-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Runtime install: enough for `make demo` and `trainjobs` itself.
$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	touch $@

# Dev install: linters, type checker and test tools.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e '.[dev]'
	touch $(VENV)/.installed $@

# The frameworks run-local is proven with: torch (CPU wheel), TensorFlow, JAX, mpi4py, redis.
$(PROOFS): pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e '.[dev,proofs]'
	touch $(VENV)/.installed $(STAMP) $@

# MindSpore 2.10 needs protobuf >= 7.34, which the Pulumi SDK (protobuf < 7) forbids in one
# environment: its proof runs the job's `python` from a venv of its own.
MS_VENV := .venv-mindspore
$(MS_VENV)/.installed:
	$(PYTHON) -m venv $(MS_VENV)
	$(MS_VENV)/bin/pip install --quiet mindspore==2.10.0
	touch $@

## system-deps: the Debian packages of the proofs; installs only what is missing
system-deps:
	@dpkg -s $(DEBS) >/dev/null 2>&1 || { \
		echo "installing $(DEBS)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(DEBS) >/dev/null; }

## proof-deps: everything the real-framework tests of run-local need
proof-deps: $(PROOFS) $(MS_VENV)/.installed system-deps

install: $(VENV)/.installed

## demo: the demo stack on a local cluster: builds the programs that are missing (once per
## machine, from the Go module proxy), starts this folder's sandbox (or keeps the one
## running), `pulumi up` of stacks/Pulumi.demo.yaml, then one table of what runs where
# The demo stack has no MPIJob: its sandbox leaves the MPI Operator out, so port 8080 (which
# that operator always binds) stays free for `make test`'s control plane.
demo: $(VENV)/.installed
	$(BIN)/trainjobs sandbox up --reuse --no-mpi-operator
	$(BIN)/trainjobs sandbox deploy stacks/Pulumi.demo.yaml

## demo-down: destroy the demo stack and stop the sandbox (no process, no port left)
demo-down: $(VENV)/.installed
	-$(BIN)/trainjobs sandbox destroy stacks/Pulumi.demo.yaml
	$(BIN)/trainjobs sandbox down

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
	    $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq graphviz >/dev/null; \
	  else echo "install Graphviz (its dot command), e.g. brew install graphviz" >&2; exit 1; fi; }

## cluster: build the real programs tests/cluster runs (etcd, kube-apiserver, controller-manager,
## scheduler, kubectl, kwok, the Kubeflow operators) from the Go module proxy into
## ~/.cache/trainjobs; only what is missing, so later runs take a second
cluster:
	tests/cluster/build.sh

# The TypeScript example's Node packages (@pulumi/pulumi, typescript), at its
# package-lock's versions: its proofs compile and run it with them.
TS_EXAMPLE := examples/typescript-platform
$(TS_EXAMPLE)/node_modules/.installed: $(TS_EXAMPLE)/package-lock.json
	cd $(TS_EXAMPLE) && npm ci --no-audit --no-fund --silent
	touch $@

node-deps: $(TS_EXAMPLE)/node_modules/.installed

# The Go example's modules (github.com/pulumi/pulumi/sdk/v3 …), into build.sh's module
# cache: its proof compiles it with no network.
GO_CACHE := $${TRAINJOBS_CACHE:-$$HOME/.cache/trainjobs}/go
go-deps:
	cd examples/go-platform && GOMODCACHE="$(GO_CACHE)/mod" GOPATH="$(GO_CACHE)/path" \
		GOTOOLCHAIN=local go mod download

## sdk: regenerate the component provider's TypeScript and Go SDKs (sdk/nodejs, sdk/go)
## from schema/provider.schema.json with pulumi-codegen (built by tests/cluster/build.sh)
CODEGEN = "$$(tests/cluster/build.sh --print-dir pulumi-codegen)/pulumi-codegen"
sdk:
	tests/cluster/build.sh pulumi-codegen
	rm -rf sdk/nodejs sdk/go
	$(CODEGEN) nodejs schema/provider.schema.json sdk/nodejs
	$(CODEGEN) go schema/provider.schema.json sdk/go

# Two pytest runs side by side: the tests that start a control plane (its MPI Operator
# binds :8080, so they run one after another), and every other test (run-local's
# replicas use fixed loopback ports, so those run one after another too). The first
# run's output follows the second's; either failing fails the target.
CLUSTER_TESTS := tests/cluster tests/sandbox
unit: $(STAMP) graphviz proof-deps cluster node-deps go-deps
	@log=$$(mktemp); \
	$(BIN)/pytest $(CLUSTER_TESTS) >"$$log" 2>&1 & cluster=$$!; \
	$(BIN)/pytest $(foreach d,$(CLUSTER_TESTS),--ignore=$(d)); rest=$$?; \
	wait $$cluster; clusters=$$?; \
	echo "--- $(CLUSTER_TESTS) ---"; cat "$$log"; rm -f "$$log"; \
	test $$rest -eq 0 && test $$clusters -eq 0

## docs: redraw the pictures the README shows (a test fails when they are stale)
docs: $(VENV)/.installed graphviz
	$(BIN)/trainjobs graph stacks/Pulumi.demo.yaml -o docs/demo-stack.svg

## test: everything CI runs
test: lint typecheck layers unit

## bench: the benchmark table (cdk8s, which runs on Node.js, is installed for the comparison)
bench: $(STAMP)
	$(PIP) cdk8s
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 $(BIN)/python -m bench.run

## bench-cluster: big pods-target jobs through the real engine, provider and control plane:
## trainjobs vs a raw ConfigFile vs kubectl apply --server-side (minutes; builds the
## programs on first use). WORKERS="256 512 1024" for the issue-35 sizes; MIXED=100 adds
## a stack of 100 small jobs of six frameworks; SIDES picks among trainjobs, pod-set
## (registration: pod-set) and raw.
WORKERS ?= 64 128 256
MIXED ?=
SIDES ?= trainjobs pod-set raw
bench-cluster: $(STAMP)
	$(BIN)/python -m bench.cluster.run --workers $(WORKERS) --mixed $(MIXED) --sides $(SIDES)

## constraints: pin constraints.txt to what this venv has (run after a green make test)
constraints: | $(BIN)/python
	{ head -n 3 constraints.txt; $(BIN)/pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) $(MS_VENV) out .mypy_cache .ruff_cache .pytest_cache .hypothesis
