# Penumbra. `make demo` runs it on the embedded default; `make test` runs lint, import floors, types and the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Two workers: this project's machines have two cores.
PYTEST_WORKERS ?= 2
# Services, selectors, the maths and the background work: where a type error would corrupt data.
TYPED := $(wildcard */services.py */selectors.py */tasks.py) projects/imports/items.py projects/imports/rows.py \
	projects/llm_url.py projects/imports/tasks.py projects/jobs.py projects/imports/formats.py $(wildcard projects/formats/*.py) \
	annotation/imports/formats.py client/penumbra_client/client.py client/penumbra_client/errors.py client/penumbra_client/types.py \
	annotation/imports/labels.py annotation/judgment.py annotation/imports/tasks.py \
	aggregation/maths/ifs.py aggregation/maths/agreement.py aggregation/maths/intervals.py aggregation/maths/weights.py aggregation/maths/comparisons.py \
	aggregation/maths/minimums.py aggregation/maths/sampling.py aggregation/maths/accuracy.py aggregation/maths/certification.py aggregation/maths/dataset_card.py \
	suggestions/llm.py suggestions/figures.py suggestions/handoff.py suggestions/receivers.py \
	suggestions/models.py aggregation/cards.py suggestions/requests.py suggestions/certification.py \
	suggestions/rubber_stamp.py annotation/resolution_services.py annotation/request_selectors.py aggregation/exports/card.py \
	aggregation/exports/stream.py aggregation/exports/tasks.py aggregation/dispatch.py aggregation/receivers.py config/events.py config/bulk.py config/sessions.py config/input_limits.py config/csv_safe.py config/openapi.py \
	config/locks.py \
	annotation/participants/services.py annotation/participants/selectors.py annotation/participants/export.py \
	annotation/notes/services.py annotation/notes/selectors.py annotation/checks.py annotation/queue/services.py annotation/compiled_sql.py config/auth.py \
	annotation/label_selectors.py annotation/home_selectors.py \
	aggregation/figures/settings.py aggregation/figures/judgments.py aggregation/loading.py aggregation/figures/items.py \
	aggregation/figures/annotators.py aggregation/figures/project.py aggregation/writers.py projects/preference.py \
	aggregation/maths/ifs_operators.py aggregation/maths/consensus.py aggregation/maths/signed.py aggregation/exports/options.py \
	annotation/studies/design.py annotation/studies/services.py annotation/studies/selectors.py \
	aggregation/maths/method_comparison.py aggregation/studies/report.py \
	aggregation/maths/position_bias.py aggregation/maths/adaptive.py aggregation/maths/self_consistency.py aggregation/studies/figures.py \
	aggregation/studies/adaptive.py aggregation/studies/selectors.py annotation/queue/order.py annotation/repeat_services.py \
	annotation/repeat_selectors.py projects/imports/annotators.py projects/imports/preview.py projects/imports/selectors.py \
	annotation/imports/identities.py

.PHONY: demo test lint typecheck pytest run worker beat migrate clean benchmarks

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

run: migrate
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

worker: $(VENV)/.runtime
	$(BIN)/celery -A config worker --loglevel=info --without-gossip --without-mingle --without-heartbeat

beat: $(VENV)/.runtime
	$(BIN)/celery -A config beat --loglevel=info

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.dev
	$(BIN)/mypy $(TYPED)

pytest: $(VENV)/.dev
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

test: lint typecheck pytest

benchmarks: $(VENV)/.dev
	$(BIN)/python benchmarks/aggregate.py

clean:
	rm -rf $(VENV) var staticfiles test-artifacts .pytest_cache .mypy_cache .ruff_cache
