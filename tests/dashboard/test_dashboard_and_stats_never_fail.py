"""The dashboard page, its HTMX fragments and the stats API answer 200 with well-formed JSON (no NaN, no
Infinity) for any small project: no labels, one label, one annotator, no overlap, only skips, all ties, binary,
Likert, IFS, handed off, figures computed or not, stale after a settings change.

Each example builds its project inside a transaction that is rolled back at the end, so examples never see each
other's rows and the test needs only pytest-django's ``db`` fixture (hypothesis' function-scoped fixture check is
silenced for that reason: the fixture is the outer test transaction, the examples nest inside it).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from aggregation.services import project_aggregates_recompute
from annotation.models import Annotation, Assignment, JudgmentValue
from projects.models import TIE, Membership, Project
from projects.services import project_update
from suggestions.handoff import handoff_apply
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory

pytestmark = pytest.mark.django_db

NOT_A_NUMBER = re.compile(rb"\b(nan|-?inf|infinity)\b", re.IGNORECASE)
SKIP = "skip"
User = get_user_model()
# What one annotator did with one item: nothing, a skip, or a label preferring position 0, 1 or neither.
ACTIONS = st.sampled_from([None, None, SKIP, 0, 1, TIE])


@st.composite
def projects(draw: st.DrawFn) -> dict[str, Any]:
    n_items = draw(st.integers(0, 4))
    n_annotators = draw(st.integers(0, 3))
    return {
        "mode": draw(st.sampled_from(Project.Mode.values)),
        "n_items": n_items,
        "actions": [[draw(ACTIONS) for _ in range(n_annotators)] for _ in range(n_items)],
        "ifs_values": draw(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=8, max_size=8)),
        "gold": draw(st.sampled_from([None, 0, 1, TIE])),
        "suggestions": draw(st.booleans()),
        "blind_rate": draw(st.sampled_from([0.0, 0.5, 1.0])),
        "computed": draw(st.booleans()),
        "hand_off": draw(st.booleans()),
        "settings_changed": draw(st.booleans()),
    }


def _label(project: Project, item, annotator, preferred: int, values: list[tuple[int, int]], number: int) -> None:
    annotation = Annotation.objects.create(
        project=project,
        item=item,
        annotator=annotator,
        mode=project.mode,
        response_order=[0, 1],
        binary_choice=preferred if project.mode == Project.Mode.BINARY else None,
        likert_value=(
            {0: 1, 1: project.likert_points, TIE: (project.likert_points + 1) // 2}[preferred]
            if project.mode == Project.Mode.LIKERT
            else None
        ),
        time_spent_ms=700 * number,
    )
    if project.mode == Project.Mode.IFS:
        criterion = project.criteria.first()
        rows = []
        for response in item.responses.all():
            mu, nu = values[(number + response.position) % len(values)]
            nu = min(nu, 1000 - mu)
            if preferred != TIE and response.position != preferred:
                mu, nu = nu, mu  # the other response gets the mirrored judgment
            rows.append(JudgmentValue(annotation=annotation, response=response, criterion=criterion, mu=mu, nu=nu))
        JudgmentValue.objects.bulk_create(rows)
    item.annotation_count += 1
    item.save(update_fields=["annotation_count"])


def _build(spec: dict[str, Any], lead) -> Project:
    project = ProjectFactory(
        mode=spec["mode"],
        blind_rate=spec["blind_rate"],
        overlap=2,
        handoff_minimum_blind_comparisons=1,
        handoff_agreement_threshold=0.0,
    )
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    width = max((len(row) for row in spec["actions"]), default=0)
    # Plain users and force_login below: hashing a password per example would cost more than everything else.
    annotators = [User.objects.create(username=f"p{project.pk}-a{n}") for n in range(width)]
    for user in annotators:
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    now = timezone.now()
    for index, row in enumerate(spec["actions"]):
        item = ItemFactory(project=project, gold_position=spec["gold"])
        if spec["suggestions"]:
            SuggestionFactory(item=item, preferred_position=index % 2)
        for number, (user, action) in enumerate(zip(annotators, row, strict=False)):
            if action == SKIP:
                Assignment.objects.create(
                    project=project,
                    item=item,
                    annotator=user,
                    status=Assignment.Status.SKIPPED,
                    response_order=[0, 1],
                    claimed_at=now,
                    expires_at=now + timedelta(minutes=15),
                    skip_reason="unclear",
                )
            elif action is not None:
                _label(project, item, user, action, spec["ifs_values"], number)
    if Annotation.objects.filter(project=project).exists():
        Project.objects.filter(pk=project.pk).update(labelling_started_at=now)
        project.refresh_from_db()
    if spec["computed"]:
        project_aggregates_recompute(project_id=project.pk)
        if spec["hand_off"]:
            try:
                handoff_apply(project=project)
            except ValidationError:
                Project.objects.filter(pk=project.pk).update(phase=Project.Phase.HANDED_OFF)
        if spec["settings_changed"]:
            project_update(project=project, changes={"tie_tolerance": 0.5})
    project.refresh_from_db()
    return project


def _strict_json(response) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in JSON from {response.request['PATH_INFO']}")

    return json.loads(response.content, parse_constant=refuse)


def _pages(client: Client, project: Project) -> None:
    dashboard = reverse("dashboard", kwargs={"project_id": project.pk})
    card = reverse("suggestion_card", kwargs={"project_id": project.pk})
    for url, headers in (
        (dashboard, {}),
        (dashboard, {"HTTP_HX_REQUEST": "true"}),
        (card, {}),
        (card, {"HTTP_HX_REQUEST": "true"}),
    ):
        response = client.get(url, **headers)
        assert response.status_code == 200, (url, headers, response.content[:300])
        # A number the maths could not produce must not be printed as one.
        assert not NOT_A_NUMBER.search(response.content), (url, NOT_A_NUMBER.search(response.content))
    stats = client.get(f"/api/projects/{project.pk}/stats/")
    assert stats.status_code == 200
    body = _strict_json(stats)
    assert isinstance(body["stale"], bool)
    assert set(body["agreement"]) == {
        "pairwise_with_ties",
        "pairwise_without_ties",
        "alpha_nominal",
        "alpha_interval",
        "ifs",
    }


def _spec(mode: str, actions: list[list[Any]], **overrides: Any) -> dict[str, Any]:
    spec = {
        "mode": mode,
        "n_items": len(actions),
        "actions": actions,
        "ifs_values": [(700, 200)] * 8,
        "gold": None,
        "suggestions": False,
        "blind_rate": 0.0,
        "computed": True,
        "hand_off": False,
        "settings_changed": False,
    }
    return {**spec, **overrides}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=projects())
# The demo tour's first save: one annotator, one label, figures computed, nothing to agree on yet.
@example(spec=_spec(Project.Mode.BINARY, [[0], [None]]))
@example(spec=_spec(Project.Mode.IFS, [[0, None], [None, 1]]))
@example(spec=_spec(Project.Mode.LIKERT, [[SKIP, SKIP]]))
def test_dashboard_fragments_and_stats_answer_for_any_small_project(db, spec):
    with transaction.atomic():
        lead = User.objects.create(username="fuzz-lead")
        project = _build(spec, lead)
        client = Client()
        client.force_login(lead)
        _pages(client, project)
        transaction.set_rollback(True)
