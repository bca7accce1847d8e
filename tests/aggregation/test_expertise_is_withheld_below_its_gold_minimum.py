"""An annotator's expertise (accuracy on gold) carries its number of gold items and is withheld, with the reason,
below aggregation.maths.minimums.MIN_EXPERTISE_GOLD: on random small projects no reader (the dashboard rows, the
annotators API) shows an expertise from fewer gold items, and every shown one lies in [0, 1]."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aggregation import services
from aggregation.maths.minimums import MIN_EXPERTISE_GOLD, expertise_needs
from aggregation.models import AnnotatorAggregate
from aggregation.selectors import annotator_figures_withheld
from tests.aggregation.conftest import annotate_ifs, project_make

FOR = [(800, 100), (100, 800)]
AGAINST = [(100, 800), (800, 100)]


def test_the_reason_names_the_minimum_and_the_count():
    assert expertise_needs(MIN_EXPERTISE_GOLD) is None
    assert expertise_needs(1) == f"needs {MIN_EXPERTISE_GOLD} gold items labelled by this annotator (1 so far)"
    assert "recompute" in expertise_needs(None)


@pytest.mark.django_db
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_items=st.integers(min_value=1, max_value=8),
    n_gold=st.integers(min_value=0, max_value=8),
    answers=st.lists(st.lists(st.booleans(), min_size=8, max_size=8), min_size=2, max_size=3),
)
def test_no_expertise_from_fewer_gold_items_than_the_minimum(n_items, n_gold, answers):
    project, items, annotators = project_make(n_items=n_items, n_annotators=len(answers))
    gold = items[: min(n_gold, n_items)]
    for item in gold:
        item.gold_position = 0
        item.save(update_fields=["gold_position"])
    for annotator, right in zip(annotators, answers, strict=True):
        for item, agrees in zip(items, right, strict=False):
            annotate_ifs(item, annotator, FOR if agrees else AGAINST)

    services.annotator_aggregates_recompute(project_id=project.pk)

    stored = list(AnnotatorAggregate.objects.filter(project=project))
    assert {row.expertise_n for row in stored} == {len(gold)}
    for row in annotator_figures_withheld(stored, agreement=None):
        if len(gold) < MIN_EXPERTISE_GOLD:
            assert row.expertise is None
            assert f"({len(gold)} so far)" in row.expertise_reason
        else:
            assert row.expertise_reason is None
            assert 0.0 <= row.expertise <= 1.0


@pytest.mark.django_db
def test_the_api_and_the_dashboard_say_why(project, annotator, annotator2, lead_client):
    from tests.dashboard.conftest import annotator_aggregates_create

    rows = annotator_aggregates_create(project=project, users=[annotator, annotator2])
    AnnotatorAggregate.objects.filter(pk=rows[0].pk).update(expertise=1.0, expertise_n=1)

    api = {
        row["annotator"]: row for row in lead_client.get(f"/api/projects/{project.pk}/aggregates/annotators/").json()
    }
    page = lead_client.get(f"/projects/{project.pk}/dashboard/").content.decode()

    assert api[annotator.username]["expertise"] is None
    assert api[annotator.username]["expertise_n"] == 1
    assert "(1 so far)" in api[annotator.username]["expertise_reason"]
    assert api[annotator2.username]["expertise"] == 0.7
    assert api[annotator2.username]["expertise_reason"] is None
    assert "gold items labelled by this annotator (1 so far)" in page
    assert '0.700 <span class="muted">n = 8</span>' in page
