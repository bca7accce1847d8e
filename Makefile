# Penumbra. `make demo` runs it on the embedded default; `make test` runs lint, import floors, types and the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Two workers: this project's machines have two cores.
PYTEST_WORKERS ?= 2
# Services, selectors, the maths and the background work: where a type error would corrupt data.
TYPED := $(wildcard */services.py */selectors.py */tasks.py) projects/importing.py projects/import_rows.py \
	projects/llm_url.py projects/import_tasks.py projects/jobs.py projects/format_import.py $(wildcard projects/formats/*.py) \
	annotation/label_formats.py client/penumbra_client/client.py client/penumbra_client/errors.py \
	annotation/label_import.py annotation/judgment.py annotation/import_tasks.py \
	aggregation/ifs.py aggregation/agreement.py aggregation/intervals.py aggregation/weights.py aggregation/comparisons.py \
	aggregation/sampling.py aggregation/accuracy.py aggregation/certification.py aggregation/dataset_card.py \
	suggestions/llm.py suggestions/figures.py suggestions/handoff.py suggestions/receivers.py \
	suggestions/models.py aggregation/cards.py suggestions/requests.py suggestions/certification.py \
	suggestions/rubber_stamp.py annotation/resolution_services.py annotation/request_selectors.py aggregation/export_card.py \
	aggregation/export.py aggregation/export_tasks.py aggregation/dispatch.py aggregation/receivers.py config/events.py config/bulk.py config/sessions.py config/input_limits.py config/csv_safe.py config/openapi.py \
	annotation/study_services.py annotation/study_selectors.py annotation/study_export.py \
	annotation/note_services.py annotation/note_selectors.py annotation/checks.py annotation/claim_services.py annotation/compiled_sql.py config/auth.py \
	annotation/label_selectors.py annotation/home_selectors.py \
	aggregation/figure_settings.py aggregation/judgments.py aggregation/loading.py aggregation/item_figures.py \
	aggregation/annotator_figures.py aggregation/project_figures.py aggregation/writers.py projects/preference.py \
	aggregation/ifs_operators.py aggregation/consensus.py aggregation/signed.py aggregation/export_options.py \
	annotation/crossover_design.py annotation/crossover_services.py annotation/crossover_selectors.py \
	aggregation/method_comparison.py aggregation/method_study_report.py \
	aggregation/position_bias.py aggregation/adaptive.py aggregation/self_consistency.py aggregation/study_figures.py \
	aggregation/adaptive_services.py aggregation/study_selectors.py annotation/queue_order.py annotation/repeat_services.py \
	annotation/repeat_selectors.py

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
