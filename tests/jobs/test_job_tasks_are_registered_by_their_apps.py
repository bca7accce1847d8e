"""Every kind of job has the task that runs it, registered by the app that owns it (its AppConfig.ready), so the
job runner in projects names no module above it; the registry refuses what would send a job to the wrong place."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest
from celery import current_app

from projects import jobs
from projects.models import Job
from tests.factories import ProjectFactory

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_of_job_has_a_registered_celery_task():
    owners = {
        Job.Kind.IMPORT_ITEMS: "projects.",
        Job.Kind.IMPORT_LABELS: "annotation.",
        Job.Kind.EXPORT: "aggregation.",
        Job.Kind.SUGGEST: "suggestions.",
    }
    assert set(owners) == set(Job.Kind.values), "a new kind of job needs its owner here"
    for kind, app in owners.items():
        task = jobs.job_task_for(kind)
        assert task is not None, f"no task registered for {kind}"
        assert task.__module__.startswith(app), (kind, task.__module__)
        # The worker finds it under the name the runner sends.
        assert current_app.tasks[task.name].run.__module__ == task.__module__


def test_the_registry_refuses_an_unknown_kind_and_a_second_task_for_a_kind():
    export_task = jobs.job_task_for(Job.Kind.EXPORT)
    suggest_task = jobs.job_task_for(Job.Kind.SUGGEST)
    assert export_task is not None
    assert suggest_task is not None

    with pytest.raises(ValueError, match="'reindex' is not a kind of job"):
        jobs.job_task_register(kind="reindex", task=export_task)
    with pytest.raises(ValueError, match="export jobs already run with"):
        jobs.job_task_register(kind=Job.Kind.EXPORT, task=suggest_task)

    jobs.job_task_register(kind=Job.Kind.EXPORT, task=export_task)  # the same again (a second ready()) is fine
    assert jobs.job_task_for(Job.Kind.EXPORT) is export_task


@pytest.mark.django_db
def test_a_job_whose_task_is_missing_stays_pending_and_says_why(monkeypatch, caplog):
    job = Job.objects.create(project=ProjectFactory(), kind=Job.Kind.EXPORT)
    monkeypatch.setattr(jobs, "_TASKS", {})
    caplog.set_level(logging.ERROR, logger="projects.jobs")

    assert jobs.job_enqueue(job_id=job.pk) is False

    job.refresh_from_db()
    assert job.status == Job.Status.PENDING
    assert job.enqueued_at is None
    assert "no task is registered for export jobs" in caplog.text


def test_projects_names_no_module_by_string():
    """The contracts see imports, not strings: an importlib call in projects could reach above it unseen."""
    offenders = []
    for path in sorted((ROOT / "projects").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else []
            if any(name == "importlib" or name.startswith("importlib.") for name in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
