"""First-hour honesty over small generated projects: no agreement figure (pairwise, Krippendorff's α) and no
annotator weight is shown, by the stats API, the annotators API or the dashboard, from less than the minimum in
aggregation.maths.minimums; and once the minimum is met they are shown (so hiding everything would fail).

Each example builds its project in a transaction rolled back at the end (as test_dashboard_and_stats_never_fail
does), so the function-scoped fixture check of hypothesis is silenced on purpose.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from aggregation.maths import minimums
from aggregation.services import project_aggregates_recompute
from projects.models import Project
from tests.aggregation.conftest import annotate_binary, project_make
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

ALPHAS = ("alpha_interval", "alpha_nominal")


@st.composite
def small_projects(draw: st.DrawFn) -> dict[str, Any]:
    n_annotators = draw(st.integers(1, 3))
    n_items = draw(st.integers(1, minimums.MIN_OVERLAP_ITEMS + 2))
    # labels[i][a]: None (not labelled) or the position annotator a preferred on item i.
    labels = [[draw(st.sampled_from([None, 0, 1])) for _ in range(n_annotators)] for _ in range(n_items)]
    return {"n_annotators": n_annotators, "n_items": n_items, "labels": labels}


class _Rollback(Exception):
    pass


def _pairable_values_vary(labels: list[list[int | None]]) -> bool:
    pairable = [v for row in labels if sum(v is not None for v in row) >= 2 for v in row if v is not None]
    return len(set(pairable)) > 1


def _check(spec: dict[str, Any]) -> None:
    project, items, annotators = project_make(
        mode=Project.Mode.BINARY, n_items=spec["n_items"], n_annotators=spec["n_annotators"]
    )
    for item, row in zip(items, spec["labels"], strict=True):
        for annotator, choice in zip(annotators, row, strict=True):
            if choice is not None:
                annotate_binary(item, annotator, choice)
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role="lead")
    project_aggregates_recompute(project_id=project.pk)
    client = Client()
    client.force_login(lead)

    overlap = sum(sum(v is not None for v in row) >= 2 for row in spec["labels"])
    enough = overlap >= minimums.MIN_OVERLAP_ITEMS
    stats = client.get(reverse("api-stats", args=[project.pk])).json()["agreement"]
    for name in ("pairwise_with_ties", *ALPHAS):
        figure = stats[name]
        if not enough:
            assert figure["value"] is None, (name, overlap, figure)
            assert figure["ci"] == [None, None]
            assert "needs 2 annotators on at least" in figure["reason"]
    if enough:
        assert stats["pairwise_with_ties"]["value"] is not None
        if _pairable_values_vary(spec["labels"]):
            assert all(stats[name]["value"] is not None for name in ALPHAS), stats

    labels_of = [sum(row[a] is not None for row in spec["labels"]) for a in range(spec["n_annotators"])]
    rows = client.get(reverse("api-annotator-aggregates", args=[project.pk])).json()
    by_name = {row["annotator"]: row for row in rows}
    for a, annotator in enumerate(annotators):
        row = by_name.get(annotator.username)
        if row is None:
            continue  # no labels, no row
        supported = (
            spec["n_annotators"] >= minimums.MIN_ANNOTATORS
            and len(rows) >= minimums.MIN_ANNOTATORS
            and labels_of[a] >= minimums.MIN_WEIGHT_LABELS
            and enough
        )
        if supported:
            assert row["weight"] is not None, row
            assert row["weight_reason"] is None, row
        else:
            assert row["weight"] is None, row
            assert row["agreement"] is None, row
            assert row["weight_reason"], row

    html = client.get(reverse("dashboard", args=[project.pk])).content.decode()
    card = re.search(r'aria-labelledby="agreement-title">(.*?)</section>', html, re.S).group(1)
    if not enough:
        assert not re.search(r"<strong>-?\d\.\d{3}</strong>", card), "an agreement number below the minimum"
        assert f"({overlap} so far)" in card
    weights = re.search(r'aria-labelledby="annotators-title">(.*?)</section>', html, re.S)
    if weights:
        shown = len(re.findall(r'class="dash-inline-bar"', weights.group(1)))
        assert shown == sum(r["weight"] is not None for r in rows)


@given(spec=small_projects())
@example(spec={"n_annotators": 2, "n_items": 1, "labels": [[0, 1]]})  # the 0.000 and 0.75 / 0.25
@example(spec={"n_annotators": 2, "n_items": 5, "labels": [[0, 1], [0, 0], [1, 1], [1, 0], [0, 0]]})
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_agreement_or_weight_below_the_minimum_and_both_once_it_is_met(spec: dict[str, Any], db: None) -> None:
    try:
        with transaction.atomic():
            _check(spec)
            raise _Rollback
    except _Rollback:
        pass
