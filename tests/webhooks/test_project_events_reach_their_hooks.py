"""The events a lead can hook reach them from where they happen: an export job's end, a handoff made and undone, a
project whose every item has its labels (once per completion)."""

from __future__ import annotations

import pytest

from aggregation.exports.options import ExportOptions
from aggregation.exports.tasks import export_job_run, export_job_start
from projects.webhooks.models import WebhookDelivery
from projects.webhooks.services import webhook_create, webhook_progress_announce
from projects.webhooks.tasks import deliveries_send_on_commit
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_apply, handoff_undo
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db


def _delivered(receiver, hook):
    rows = WebhookDelivery.objects.filter(webhook=hook).order_by("id")
    assert all(row.status == "delivered" for row in rows)
    return [row.event for row in rows], [row.payload["data"] for row in rows]


def test_an_export_job_announces_its_end(project, lead, receiver_factory, django_capture_on_commit_callbacks):
    receiver = receiver_factory([200])
    hook = webhook_create(project=project, url=receiver.url, events=["export.done"], user=lead)
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_start(project=project, user=lead, options=ExportOptions(format="annotations"))
    with django_capture_on_commit_callbacks(execute=True):
        export_job_run(job_id=job.pk)

    names, data = _delivered(receiver, hook)
    assert names == ["export.done"]
    assert data[0]["job_id"] == job.pk
    assert data[0]["kind"] == "export"
    assert "card" not in data[0]["result"]
    assert len(receiver.requests) == 1


def test_a_handoff_made_and_undone_reaches_the_hook(receiver_factory, django_capture_on_commit_callbacks):
    project = ProjectFactory(blind_rate=1.0, overlap=1, handoff_minimum_blind_comparisons=20)
    person, lead = UserFactory(username="h-person"), UserFactory(username="h-lead")
    MembershipFactory(project=project, user=person)
    MembershipFactory(project=project, user=lead, role="lead")
    items = items_create(project, 26)
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
    for item in items[:20]:
        label(project, item, person, 0)
    suggestion_figures_recompute(project_id=project.pk)
    receiver = receiver_factory([200])
    hook = webhook_create(project=project, url=receiver.url, events=["handoff.made", "handoff.undone"], user=lead)

    with django_capture_on_commit_callbacks(execute=True):
        made = handoff_apply(project=project, user=lead)
    with django_capture_on_commit_callbacks(execute=True):
        handoff_undo(project=project, user=lead)

    names, data = _delivered(receiver, hook)
    assert names == ["handoff.made", "handoff.undone"]
    assert data[0]["decision_id"] == made.pk
    assert data[0]["items"] == data[1]["items"] == 6
    assert data[0]["automatic"] is False


def test_project_completed_is_sent_once_per_completion(receiver_factory, django_capture_on_commit_callbacks):
    project = ProjectFactory(overlap=1)
    person, lead = UserFactory(username="c-person"), UserFactory(username="c-lead")
    MembershipFactory(project=project, user=person)
    items = items_create(project, 2)
    receiver = receiver_factory([200])
    hook = webhook_create(project=project, url=receiver.url, events=["project.completed"], user=lead)

    label(project, items[0], person, 0)
    with django_capture_on_commit_callbacks(execute=True):
        assert webhook_progress_announce(project_id=project.pk) == []  # one item of two is done
    label(project, items[1], person, 1)
    for _ in range(2):  # as after two recomputes
        with django_capture_on_commit_callbacks(execute=True):
            deliveries_send_on_commit(webhook_progress_announce(project_id=project.pk))

    names, data = _delivered(receiver, hook)
    assert names == ["project.completed"]
    assert (data[0]["items_done"], data[0]["items_total"]) == (2, 2)
