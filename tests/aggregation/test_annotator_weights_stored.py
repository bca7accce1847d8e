"""Annotator weights (Eq. 8 parts, consensus weight) and working figures are stored per annotator."""

from __future__ import annotations

import math
import statistics

import pytest

from aggregation import services
from aggregation.models import AnnotatorAggregate, ItemAggregate
from tests.aggregation.conftest import annotate_ifs, project_make

GOOD = [(800, 100), (100, 800)]
ALSO_GOOD = [(700, 100), (200, 600)]
BAD = [(100, 800), (900, 0)]
TIMES = {"good": [1000, 2000, 3000, 10000], "also_good": [500, 500, 700, 900], "bad": [100, 100, 100, 100]}


def _distance(a, b):
    d_mu, d_nu = (a[0] - b[0]) / 1000, (a[1] - b[1]) / 1000
    return math.sqrt(0.5 * (d_mu**2 + d_nu**2 + (d_mu + d_nu) ** 2))


def _leave_one_out(own, others):
    distances = []
    for position in range(2):
        mean_mu = sum(o[position][0] for o in others) / len(others)
        mean_nu = sum(o[position][1] for o in others) / len(others)
        distances.append(_distance(own[position], (mean_mu, mean_nu)))
    return 1 - sum(distances) / len(distances)


@pytest.mark.django_db
def test_gold_accuracy_and_agreement_make_the_weight():
    project, items, annotators = project_make(n_items=4)
    for item in items:
        item.gold_position = 0
        item.save()
    labels = {"good": GOOD, "also_good": ALSO_GOOD, "bad": BAD}
    for annotator, name in zip(annotators, labels, strict=True):
        for item, time_ms in zip(items, TIMES[name], strict=True):
            annotate_ifs(item, annotator, labels[name], time_spent_ms=time_ms)

    moved = services.annotator_aggregates_recompute(project_id=project.pk)

    assert moved is True
    rows = {row.annotator_id: row for row in AnnotatorAggregate.objects.filter(project=project)}
    names = list(labels)
    quality = {}
    for annotator, name in zip(annotators, names, strict=True):
        row = rows[annotator.pk]
        others = [labels[other] for other in names if other != name]
        expected_agreement = _leave_one_out(labels[name], others)
        expected_expertise = 1.0 if name != "bad" else 0.0
        assert row.expertise == pytest.approx(expected_expertise)
        assert row.agreement == pytest.approx(expected_agreement)
        assert row.consistency is None
        assert row.n_labels == 4
        assert row.median_time_ms == round(statistics.median(TIMES[name]))
        values = labels[name]
        assert row.mean_hesitation == pytest.approx(sum(1 - (mu + nu) / 1000 for mu, nu in values) / 2)
        assert row.consensus_weight is not None
        quality[annotator.pk] = (expected_expertise + expected_agreement) / 2
    total = sum(quality.values())
    for annotator_id, q in quality.items():
        assert rows[annotator_id].weight == pytest.approx(q / total)
    assert rows[annotators[0].pk].consensus_weight > rows[annotators[2].pk].consensus_weight


@pytest.mark.django_db
def test_second_run_reports_unmoved_weights_and_items_follow_the_weights():
    project, items, annotators = project_make(n_items=2)
    for item in items:
        item.gold_position = 0
        item.save()
        for annotator, values in zip(annotators, [GOOD, ALSO_GOOD, BAD], strict=True):
            annotate_ifs(item, annotator, values)

    first = services.project_aggregates_recompute(project_id=project.pk)
    second = services.project_aggregates_recompute(project_id=project.pk)

    assert first["weights_moved"] is True
    assert first["items"] == 2
    assert second["weights_moved"] is False
    assert second["items"] == 0
    # Weighted toward the two good annotators, the item prefers position 0 more than the plain mean would.
    weighted = ItemAggregate.objects.get(item=items[0]).signed_preference
    scores = [((v[0][0] - v[0][1]) - (v[1][0] - v[1][1])) / 2000 for v in (GOOD, ALSO_GOOD, BAD)]
    assert weighted > sum(scores) / 3


@pytest.mark.django_db
def test_coefficients_of_the_project_are_applied():
    project, items, annotators = project_make(
        n_items=2, weight_consistency=0.0, weight_expertise=1.0, weight_agreement=0.0
    )
    for item in items:
        item.gold_position = 0
        item.save()
        for annotator, values in zip(annotators, [GOOD, ALSO_GOOD, BAD], strict=True):
            annotate_ifs(item, annotator, values)

    services.annotator_aggregates_recompute(project_id=project.pk)

    weights = dict(AnnotatorAggregate.objects.values_list("annotator_id", "weight"))
    # Expertise alone: the bad annotator (never right on gold) weighs nothing, the others half each.
    assert weights[annotators[2].pk] == pytest.approx(0.0)
    assert weights[annotators[0].pk] == pytest.approx(0.5)
