"""Changing a figure-relevant setting through the settings page or the API marks every figure stale (dashboard,
stats API, export header) until the recomputation it schedules has run; then the figures are fresh and follow the
new setting. The recomputation is captured after the commit and run by hand, as the eager mode runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from aggregation.forms import ProjectSettingsForm
from aggregation.models import AnnotatorAggregate, ItemAggregate, ProjectAggregate
from aggregation.services import project_aggregates_recompute
from projects.models import TIE, Membership, Project
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.factories import SuggestionFactory

pytestmark = pytest.mark.django_db

NOTICE = "stale: recomputing after a change to the settings or gold"
STRONG_FOR, STRONG_AGAINST = (800, 100), (100, 800)
MILD_FOR, MILD_AGAINST = (500, 200), (300, 400)


def _project(lead, **fields: Any) -> Project:
    """Six blind items, two criteria, three annotators, the LLM preferring position 0 everywhere.

    Items 0-3: everyone prefers 0 on "helpful" (more or less strongly) and 1 mildly on "safe" (so criterion
    weights decide).
    Items 4-5: annotators 0 and 1 prefer 1, annotator 2 prefers 0, and gold says 0 (so expertise and agreement
    with the others pull the weights apart). Blind agreement with the LLM: 14 of 18.
    """
    fields = {
        "blind_rate": 1.0,
        "handoff_agreement_threshold": 0.9,
        "handoff_minimum_blind_comparisons": 5,
        **fields,
    }
    project, items, annotators = project_make(
        criteria=(("helpful", 0.5), ("safe", 0.5)), n_items=6, n_annotators=3, **fields
    )
    Membership.objects.create(project=project, user=lead, role=Membership.Role.LEAD)
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
    for item in items[4:]:
        item.gold_position = 0
        item.save(update_fields=["gold_position"])
    for index, item in enumerate(items):
        for number, annotator in enumerate(annotators):
            if index < 4:
                # Support weakening from one annotator to the next, so the operators disagree.
                values = [[(800 - 150 * number, 100), MILD_AGAINST], [STRONG_AGAINST, MILD_FOR]]
            elif number < 2:
                values = [[STRONG_AGAINST, STRONG_AGAINST], [STRONG_FOR, STRONG_FOR]]
            else:
                values = [[STRONG_FOR, STRONG_FOR], [STRONG_AGAINST, STRONG_AGAINST]]
            annotate_ifs(item, annotator, values, time_spent_ms=1500 + 100 * number)
    Project.objects.filter(pk=project.pk).update(labelling_started_at=timezone.now())
    project.refresh_from_db()
    project_aggregates_recompute(project_id=project.pk)
    return project


def _settings_form(client, project: Project, **changes: Any):
    data = {"form": "settings"}
    data.update({k: v for k, v in ProjectSettingsForm(project=project).initial.items() if v is not None})
    data.update(changes)
    return client.post(reverse("project_settings", kwargs={"project_id": project.pk}), data)


def _criteria_form(client, project: Project, text: str):
    return client.post(
        reverse("project_settings", kwargs={"project_id": project.pk}), {"form": "criteria", "criteria": text}
    )


def _api_patch(client, project: Project, **changes: Any):
    return client.patch(f"/api/projects/{project.pk}/", changes, content_type="application/json")


def _staleness_seen(client, project: Project) -> dict[str, Any]:
    """What each of the three readers says: the stats API, the dashboard page and the export header."""
    stats = client.get(f"/api/projects/{project.pk}/stats/")
    assert stats.status_code == 200
    page = client.get(reverse("dashboard", kwargs={"project_id": project.pk}))
    assert page.status_code == 200
    export = client.get(f"/api/projects/{project.pk}/export/?format=dpo")
    assert export.status_code == 200
    header = export["X-Penumbra-Stale"]
    b"".join(export.streaming_content)
    body = stats.json()
    return {
        "api": body["stale"],
        "api_reasons": body["stale_reasons"],
        "api_reason": body["stale_reason"],
        "page": NOTICE in page.content.decode(),
        "header": header,
    }


FRESH = {"api": False, "api_reasons": [], "api_reason": None, "page": False, "header": "0"}
STALE = {
    "api": True,
    "api_reasons": ["settings_changed"],
    "api_reason": NOTICE,
    "page": True,
    "header": f"1; {NOTICE}",
}


def _items(project: Project) -> dict[int, tuple[Any, ...]]:
    return {
        row.item_id: (row.operator, row.best_position, round(row.margin, 9), round(row.p_best, 9))
        for row in ItemAggregate.objects.filter(project=project)
    }


def _weights(project: Project) -> dict[int, float]:
    return {row.annotator_id: round(row.weight, 9) for row in AnnotatorAggregate.objects.filter(project=project)}


def _handoff(project: Project) -> dict[str, Any]:
    return ProjectAggregate.objects.get(project=project).suggestions["handoff"]


def _change_and_recompute(
    client, project: Project, change: Callable[[], Any], capture: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Apply ``change`` (a request), read staleness, run what it scheduled after the commit, read again."""
    assert _staleness_seen(client, project) == FRESH
    with capture(execute=False) as callbacks:
        response = change()
    assert response.status_code in (200, 302), response.content[:500]
    project.refresh_from_db()
    before = _staleness_seen(client, project)
    assert callbacks, "the settings change scheduled nothing"
    for callback in callbacks:
        callback()
    return before, _staleness_seen(client, project)


def test_operator_change(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead)
    old = _items(project)
    stale, fresh = _change_and_recompute(
        lead_client,
        project,
        lambda: _settings_form(lead_client, project, aggregation_operator="ifwg"),
        django_capture_on_commit_callbacks,
    )
    assert (stale, fresh) == (STALE, FRESH)
    new = _items(project)
    assert {operator for operator, *_ in new.values()} == {"ifwg"}
    assert {operator for operator, *_ in old.values()} == {"weighted_mean"}
    assert any(new[item][2:] != old[item][2:] for item in new)


def test_weight_coefficients_change(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead)
    old = _weights(project)
    stale, fresh = _change_and_recompute(
        lead_client,
        project,
        lambda: _settings_form(
            lead_client, project, weight_consistency="0", weight_expertise="1", weight_agreement="0"
        ),
        django_capture_on_commit_callbacks,
    )
    assert (stale, fresh) == (STALE, FRESH)
    new = _weights(project)
    assert new.keys() == old.keys()
    assert new != old
    # Expertise alone: the annotator who matched gold on items 4-5 now weighs most.
    assert max(new, key=new.get) == max(_weights_by_name(project, "ann2"))


def _weights_by_name(project: Project, suffix: str) -> list[int]:
    return [
        row.annotator_id
        for row in AnnotatorAggregate.objects.filter(project=project).select_related("annotator")
        if row.annotator.username.endswith(suffix)
    ]


def test_tie_tolerance_change_through_the_api(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead)
    assert {best for _, best, *_ in _items(project).values()} != {TIE}
    stale, fresh = _change_and_recompute(
        lead_client,
        project,
        lambda: _api_patch(lead_client, project, tie_tolerance=2.0),
        django_capture_on_commit_callbacks,
    )
    assert (stale, fresh) == (STALE, FRESH)
    assert {best for _, best, *_ in _items(project).values()} == {TIE}


def test_criterion_weights_change(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead)
    old = _items(project)
    first_four = sorted(old)[:4]
    assert {old[item][1] for item in first_four} == {0}
    stale, fresh = _change_and_recompute(
        lead_client,
        project,
        lambda: _criteria_form(lead_client, project, "helpful: 0.1\nsafe: 0.9"),
        django_capture_on_commit_callbacks,
    )
    assert (stale, fresh) == (STALE, FRESH)
    new = _items(project)
    # "safe" now dominates, and on items 0-3 it prefers position 1.
    assert {new[item][1] for item in first_four} == {1}


def test_handoff_threshold_change(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead)
    assert _handoff(project)["eligible"] is False
    assert _handoff(project)["threshold"] == pytest.approx(0.9)
    stale, fresh = _change_and_recompute(
        lead_client,
        project,
        lambda: _settings_form(lead_client, project, handoff_agreement_threshold="0.7"),
        django_capture_on_commit_callbacks,
    )
    assert (stale, fresh) == (STALE, FRESH)
    assert _handoff(project)["threshold"] == pytest.approx(0.7)
    assert _handoff(project)["eligible"] is True


def test_handoff_minimum_change(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead, handoff_agreement_threshold=0.7, handoff_minimum_blind_comparisons=20)
    assert _handoff(project)["eligible"] is False
    assert _handoff(project)["fired"] == "minimum_blind_comparisons"
    stale, fresh = _change_and_recompute(
        lead_client,
        project,
        lambda: _settings_form(lead_client, project, handoff_minimum_blind_comparisons="10"),
        django_capture_on_commit_callbacks,
    )
    assert (stale, fresh) == (STALE, FRESH)
    assert _handoff(project)["minimum"] == 10
    assert _handoff(project)["eligible"] is True


def test_a_change_that_touches_no_figure_marks_nothing_stale(lead, lead_client, django_capture_on_commit_callbacks):
    project = _project(lead)
    version = project.settings_version
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = _settings_form(lead_client, project, name="Renamed", guidelines="Read both answers.")
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.settings_version == version
    assert not callbacks
    assert _staleness_seen(lead_client, project) == FRESH


def test_an_export_job_records_that_it_wrote_stale_figures(lead, lead_client, django_capture_on_commit_callbacks):
    from aggregation.exports.stream import ExportOptions
    from aggregation.exports.tasks import export_job_run, export_job_start

    project = _project(lead)
    with django_capture_on_commit_callbacks(execute=False):
        _settings_form(lead_client, project, aggregation_operator="ifwa")
        job = export_job_start(project=project, user=lead, options=ExportOptions())
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.result["stale"], job.result["stale_reason"]) == (True, NOTICE)
    download = lead_client.get(f"/api/jobs/{job.pk}/download/")
    assert download.status_code == 200
    assert download["X-Penumbra-Stale"] == f"1; {NOTICE}"
