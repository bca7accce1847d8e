"""Embedded mode (no broker): a settings change committed by the web process is recomputed by the background
thread, with no new label."""

from __future__ import annotations

import time

import pytest
from django.db import transaction

from aggregation import embedded
from aggregation.models import ProjectAggregate
from aggregation.selectors import figures_staleness
from projects.services import project_update
from tests.aggregation.test_settings_change_recomputes_figures import _project
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_thread_recomputes_after_a_settings_change(settings, monkeypatch, request):
    project = _project(UserFactory(username="embedded-lead"))
    assert ProjectAggregate.objects.get(project=project).suggestions["handoff"]["eligible"] is False
    runner = embedded.EmbeddedRunner(reconcile_seconds=None)
    monkeypatch.setattr(embedded, "runner", runner)
    request.addfinalizer(runner.stop)
    settings.AGGREGATION_IN_THREAD = True

    with transaction.atomic():
        project = project_update(project=project, changes={"handoff_agreement_threshold": 0.7})
    assert figures_staleness(project=project).settings_changed

    # The figures turn fresh when the project aggregate commits; the handoff verdict follows a moment later, in the
    # same run (events.figures_recomputed), so wait for both.
    def eligible() -> bool:
        return ProjectAggregate.objects.get(project=project).suggestions["handoff"]["eligible"] is True

    deadline = time.monotonic() + 30
    while (figures_staleness(project=project).stale or not eligible()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not figures_staleness(project=project).stale
    assert eligible()
