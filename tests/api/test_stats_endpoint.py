"""GET /api/projects/{id}/stats/: every headline figure as {"value", "n", "ci": [low, high], "reason"}, from stored
aggregates; a figure with fewer than 5 comparisons has value null, its count and the reason."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import transaction

from aggregation.maths.agreement import Estimate
from aggregation.maths.comparisons import figure
from aggregation.models import ProjectAggregate
from projects.models import Membership, Project
from tests.exports.builders import build_labelled_project
from tests.factories import UserFactory, demo_project_create

FIGURES = [
    ("agreement", "pairwise_with_ties"),
    ("agreement", "pairwise_without_ties"),
    ("agreement", "alpha_nominal"),
    ("agreement", "alpha_interval"),
    ("blind", "agreement"),
    ("shown", "agreement"),
]
SUGGESTION_FIGURES = [("gold", "agreement"), ("human_human", "blind"), ("human_human", "shown")]


def _figure(body, path):
    node = body
    for key in path:
        node = node[key]
    return node


@pytest.fixture(scope="module")
def computed(django_db_setup, django_db_blocker) -> Iterator[Project]:
    """The labelled project, built once for the cases that only read its stats (rolled back at the module's end)."""
    with django_db_blocker.unblock(), transaction.atomic():
        # Names of their own: the module's other cases create the conftest personas while this world lives.
        lead, annotator, annotator2 = (UserFactory(username=f"stats-{name}") for name in ("lead", "ann", "ann2"))
        project = demo_project_create(lead=lead, annotator=annotator, annotator2=annotator2)
        yield build_labelled_project(project, [annotator, annotator2])
        transaction.set_rollback(True)


@pytest.mark.parametrize("path", [*FIGURES, ("anchoring_gap",)])
def test_stats_read_the_stored_figures(computed, db, client, path):
    aggregate = ProjectAggregate.objects.get(project=computed)
    stored = _figure({**aggregate.agreement, **aggregate.suggestions, "agreement": aggregate.agreement}, path)
    client.force_login(computed.memberships.get(role=Membership.Role.LEAD).user)

    body = client.get(f"/api/projects/{computed.pk}/stats/").json()

    # "items" (the overlap a figure was computed on) is what the API reads to withhold it; it answers the rest.
    assert {**_figure(body, path), "reason": None} == {
        **{k: v for k, v in stored.items() if k != "items"},
        "reason": None,
    }
    assert _figure(body, path)["reason"] is None
    assert body["progress"] == aggregate.progress
    assert body["computed_at"] is not None


def test_stats_before_anything_is_computed_have_the_same_shape_with_nulls(project, lead_client):
    body = lead_client.get(f"/api/projects/{project.pk}/stats/").json()

    for path in [*FIGURES, *SUGGESTION_FIGURES, ("anchoring_gap",)]:
        assert _figure(body, path) == {"value": None, "n": 0, "ci": [None, None], "reason": "not computed yet"}
    assert body["computed_at"] is None


def test_too_few_comparisons_give_null_with_the_count_and_a_reason(labelled_project, lead_client):
    aggregate = ProjectAggregate.objects.get(project=labelled_project)
    two_blind = figure(Estimate(value=0.0, n=2, ci=(0.0, 0.0)))
    enough_gold = figure(Estimate(value=0.8, n=10, ci=(0.49, 0.94)))
    aggregate.suggestions = {
        **aggregate.suggestions,
        "blind": {"agreement": two_blind},
        "gold": {"agreement": enough_gold},
        "human_human": {"blind": figure(Estimate(value=0.0, n=1, ci=(0.0, 0.0))), "shown": {}},
    }
    aggregate.save(update_fields=["suggestions"])

    body = lead_client.get(f"/api/projects/{labelled_project.pk}/stats/").json()

    assert body["blind"]["agreement"] == {
        "value": None,
        "n": 2,
        "ci": [None, None],
        "reason": "needs 5 comparisons (2 so far)",
    }
    assert body["human_human"]["blind"]["reason"] == "needs 5 comparisons (1 so far)"
    assert body["human_human"]["blind"]["value"] is None
    assert body["gold"]["agreement"] == {"value": 0.8, "n": 10, "ci": [0.49, 0.94], "reason": None}


def test_stats_in_a_django_assert_num_queries_budget(labelled_project, lead_client, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        lead_client.get(f"/api/projects/{labelled_project.pk}/stats/")
