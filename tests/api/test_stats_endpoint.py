"""GET /api/projects/{id}/stats/: every headline figure as {"value", "n", "ci": [low, high]}, from stored aggregates."""

from __future__ import annotations

import pytest

FIGURES = [
    ("agreement", "pairwise_with_ties"),
    ("agreement", "pairwise_without_ties"),
    ("agreement", "alpha_nominal"),
    ("agreement", "alpha_interval"),
    ("blind", "agreement"),
    ("shown", "agreement"),
]


def _figure(body, path):
    node = body
    for key in path:
        node = node[key]
    return node


@pytest.mark.parametrize("path", [*FIGURES, ("anchoring_gap",)])
def test_stats_read_the_stored_figures(labelled_project, lead_client, path):
    aggregate = labelled_project.aggregate
    stored = _figure({**aggregate.agreement, **aggregate.suggestions, "agreement": aggregate.agreement}, path)

    body = lead_client.get(f"/api/projects/{labelled_project.pk}/stats/").json()

    assert _figure(body, path) == stored
    assert body["progress"] == aggregate.progress
    assert body["computed_at"] is not None


def test_stats_before_anything_is_computed_have_the_same_shape_with_nulls(project, lead_client):
    body = lead_client.get(f"/api/projects/{project.pk}/stats/").json()

    for path in [*FIGURES, ("anchoring_gap",)]:
        assert _figure(body, path) == {"value": None, "n": 0, "ci": [None, None]}
    assert body["computed_at"] is None


def test_stats_in_a_django_assert_num_queries_budget(labelled_project, lead_client, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        lead_client.get(f"/api/projects/{labelled_project.pk}/stats/")
