"""With a real Redis broker and Celery worker: a settings change alone, with no new label, refreshes the handoff
verdict (it used to keep the old one until the next label arrived)."""

from __future__ import annotations

import pytest
from django.db import transaction

from aggregation.models import ProjectAggregate
from aggregation.selectors import figures_staleness
from projects.models import Project
from projects.services import project_update
from tests.aggregation.test_settings_change_recomputes_figures import _project
from tests.factories import UserFactory
from tests.processes import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def _handoff(project: Project) -> dict:
    return ProjectAggregate.objects.get(project=project).suggestions.get("handoff", {})


def test_a_settings_change_alone_refreshes_the_handoff_verdict(worker):
    project = _project(UserFactory(username="worker-lead"))  # figures computed in-process: 14 of 18 blind agree
    assert _handoff(project)["eligible"] is False
    assert not figures_staleness(project=project).stale

    with transaction.atomic():
        project = project_update(project=project, changes={"handoff_agreement_threshold": 0.7})
    assert figures_staleness(project=project).settings_changed

    wait_for(lambda: _handoff(project).get("eligible") is True, "the handoff re-evaluation", worker.log)
    assert _handoff(project)["threshold"] == pytest.approx(0.7)
    wait_for(lambda: not figures_staleness(project=project).stale, "every figure catching up", worker.log)
