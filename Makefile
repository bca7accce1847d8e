# Penumbra. `make demo` runs it on the embedded default; `make test` runs lint, import floors, types, the docs site's
# strict build and the tests; `make docs` serves the docs site.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
DOCS_PORT ?= 8001
# Two workers: this project's machines have two cores.
PYTEST_WORKERS ?= 2
# mypy checks every module of the apps; pyproject.toml ([tool.mypy] files) says which.

.PHONY: demo test lint typecheck docs docs-build pytest pytest-plain run worker beat migrate clean benchmarks messages

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

# QUEUES=penumbra-jobs for a worker of the jobs queue (CELERY_JOBS_QUEUE, docs/guides/operations.md).
worker: $(VENV)/.runtime
	$(BIN)/celery -A config worker --loglevel=info --without-gossip --without-mingle --without-heartbeat \
		$(if $(QUEUES),-Q $(QUEUES))

beat: $(VENV)/.runtime
	$(BIN)/celery -A config beat --loglevel=info

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.dev
	$(BIN)/mypy

# The documentation site (mkdocs.yml): served with live reload, or built with every warning (a broken link, a missing
# picture) an error.
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr $(HOST):$(DOCS_PORT)

docs-build: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

pytest: $(VENV)/.dev
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

# The request path again with the hand-made fast paths off (PENUMBRA_FAST_PATHS=0): Django's ordinary paths must
# give the same answers, so the layer can be switched off in production without surprises.
pytest-plain: $(VENV)/.dev
	PENUMBRA_FAST_PATHS=0 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q tests/annotation tests/foundation \
		-m "not browser and not redis and not slow"

test: lint typecheck docs-build pytest pytest-plain

# Translations (docs/guides/languages.md): the marked strings into locale/*/LC_MESSAGES/*.po, then the .mo files,
# which are committed so that a deployment needs no gettext. tests/languages fails while a catalog lags behind.
LANGUAGES := -l hi -l ar -l es -l zh_Hans
MESSAGES_IGNORE := $(foreach d,$(VENV) tests client staticfiles var benchmarks tools docs static/vendor,--ignore='$(d)/*')
messages: $(VENV)/.dev
	for domain in django djangojs; do \
	  $(BIN)/python manage.py makemessages -d $$domain $(LANGUAGES) --add-location=file --no-obsolete $(MESSAGES_IGNORE); \
	done
	$(BIN)/python manage.py compilemessages --ignore=$(VENV)

benchmarks: $(VENV)/.dev
	$(BIN)/python benchmarks/aggregate.py

clean:
	rm -rf $(VENV) var staticfiles site test-artifacts .pytest_cache .mypy_cache .ruff_cache
