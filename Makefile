# Penumbra. `make demo` runs it on the embedded default; `make test` runs lint, import floors, types and the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Two workers: this project's machines have two cores.
PYTEST_WORKERS ?= 2
# mypy checks every module of the apps; pyproject.toml ([tool.mypy] files) says which.

.PHONY: demo test lint typecheck pytest pytest-plain run worker beat migrate clean benchmarks

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

migrate: $(VENV)/.runtime
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py seed_demo
	@echo "Penumbra is at http://$(HOST):$(PORT)/ (Ctrl+C stops it)"
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# runserver speaks plain HTTP, so no redirect to HTTPS on localhost (PENUMBRA_HTTPS=1 make run to try it).
run: migrate
	PENUMBRA_HTTPS=$${PENUMBRA_HTTPS:-0} $(BIN)/python manage.py runserver $(HOST):$(PORT)

worker: $(VENV)/.runtime
	$(BIN)/celery -A config worker --loglevel=info --without-gossip --without-mingle --without-heartbeat

beat: $(VENV)/.runtime
	$(BIN)/celery -A config beat --loglevel=info

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.dev
	$(BIN)/mypy

pytest: $(VENV)/.dev
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

# The request path again with the hand-made fast paths off (PENUMBRA_FAST_PATHS=0): Django's ordinary paths must
# give the same answers, so the layer can be switched off in production without surprises.
pytest-plain: $(VENV)/.dev
	PENUMBRA_FAST_PATHS=0 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q tests/annotation tests/foundation \
		-m "not browser and not redis and not slow"

test: lint typecheck pytest pytest-plain

benchmarks: $(VENV)/.dev
	$(BIN)/python benchmarks/aggregate.py

clean:
	rm -rf $(VENV) var staticfiles test-artifacts .pytest_cache .mypy_cache .ruff_cache
