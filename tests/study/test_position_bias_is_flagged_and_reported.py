"""An annotator who always prefers the response shown first is flagged, on the dashboard and in the stats API; one
who judges by content, with the stored orders balanced, is not."""

from __future__ import annotations

import pytest
from django.urls import reverse

from aggregation import services
from annotation.models import Annotation
from projects.models import ImportedAnnotator, Membership
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.factories import MembershipFactory

PREFERS_0 = [(800, 100), (100, 800)]
PREFERS_1 = [(100, 800), (800, 100)]


@pytest.fixture
def judged(db, lead):
    project, items, (biased, fair, _) = project_make(n_items=24, n_annotators=3)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for n, item in enumerate(items):
        order = [0, 1] if n % 2 == 0 else [1, 0]
        # The biased one picks whatever was on the left; the fair one always prefers response 0 (its content).
        annotate_ifs(item, biased, PREFERS_0 if order[0] == 0 else PREFERS_1)
        annotate_ifs(item, fair, PREFERS_0)
        Annotation.objects.filter(item=item, annotator__in=[biased, fair]).update(response_order=order)
    services.project_aggregates_recompute(project_id=project.pk)
    return project, biased, fair


def test_the_stats_api_flags_the_biased_annotator_only(judged, lead_client):
    project, biased, fair = judged
    study = lead_client.get(reverse("api-stats", kwargs={"project_id": project.pk})).json()["study"]
    rows = {row["annotator_id"]: row for row in study["position_bias"]["annotators"]}
    assert rows[biased.pk]["rate"] == 1.0
    assert rows[biased.pk]["flagged"] is True
    assert rows[biased.pk]["ci"][0] > 0.5
    assert rows[fair.pk]["rate"] == 0.5
    assert rows[fair.pk]["flagged"] is False
    assert rows[fair.pk]["ci"][0] < 0.5 < rows[fair.pk]["ci"][1]
    assert study["position_bias"]["n"] == 48


def test_the_dashboard_card_names_the_biased_annotator(judged, lead_client):
    project, biased, _ = judged
    html = lead_client.get(reverse("dashboard", kwargs={"project_id": project.pk})).content.decode()
    card = html[html.index('id="study-card"') :]
    card = card[: card.index("</section>")]
    assert biased.username in card
    assert card.count("prefers first position") == 1


def _import(project, name: str, items, *, with_order: bool) -> None:
    import json

    from annotation.imports.labels import labels_import

    rows = []
    for n, item in enumerate(items):
        row = {"item": item.external_id, "annotator": name, "mode": "ifs", "values": []}
        order = [0, 1] if n % 2 == 0 else [1, 0]
        for position, (mu, nu) in enumerate(PREFERS_0):  # always response 0, whatever the screen showed
            row["values"].append({"position": position, "criterion": "overall", "mu": mu / 1000, "nu": nu / 1000})
        if with_order:
            row["response_order"] = order
        rows.append(json.dumps(row))
    labels_import(project=project, lines=rows)


def test_imported_labels_without_a_screen_order_are_left_out_and_said_so(judged, lead_client):
    """An imported annotator who always chose response 0 has no known screen order: not counted, not flagged
    (it was flagged with rate 1.0 when its placeholder order counted); with its orders given it counts (0.5)."""
    project, _, _ = judged
    items = list(project.items.order_by("pk"))
    _import(project, "imported-no-order", items, with_order=False)
    _import(project, "imported-with-order", items, with_order=True)
    services.project_aggregates_recompute(project_id=project.pk)

    study = lead_client.get(reverse("api-stats", kwargs={"project_id": project.pk})).json()["study"]
    bias = study["position_bias"]
    # Imported annotators are project identities: found by the name their file gave them.
    annotators = dict(ImportedAnnotator.objects.filter(project=project).values_list("external_id", "user_id"))
    rows = {row["annotator_id"]: row for row in bias["annotators"]}
    assert bias["unknown_order"] == len(items)
    assert bias["n"] == 48 + len(items), "the labels with their order count, the others do not"
    assert rows[annotators["imported-with-order"]]["rate"] == 0.5
    no_order = rows.get(annotators["imported-no-order"])
    assert no_order is None or (no_order["rate"] is None and not no_order["flagged"])
    html = lead_client.get(reverse("dashboard", kwargs={"project_id": project.pk})).content.decode()
    assert f"{len(items)} imported labels without their screen order are left out." in html


def test_the_project_headline_is_withheld_below_its_minimum_with_its_n():
    import numpy as np
    from hypothesis import given
    from hypothesis import strategies as st

    from aggregation.maths.position_bias import MINIMUM_JUDGMENTS, position_bias

    @given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, np.nan]), st.integers(0, 2)), max_size=3 * MINIMUM_JUDGMENTS))
    def check(judgments):
        outcome = np.array([o for o, _ in judgments], dtype=np.float64)
        annotator = np.array([a for _, a in judgments], dtype=np.int64)
        shown = position_bias(outcome, annotator, 3).as_dict([10, 11, 12])
        decided = int(np.isfinite(outcome).sum())
        assert shown["n"] == decided
        if decided < MINIMUM_JUDGMENTS:
            assert shown["rate"] is None
            assert shown["ci"] is None
            assert shown["reason"] == f"needs {MINIMUM_JUDGMENTS} decided judgments ({decided} so far)"
        elif shown["rate"] is not None:
            assert 0.0 <= shown["ci"][0] <= shown["rate"] <= shown["ci"][1] <= 1.0
        for row in shown["annotators"]:
            if row["ci"] is not None:
                assert 0.0 <= row["ci"][0] <= row["ci"][1] <= 1.0

    check()
