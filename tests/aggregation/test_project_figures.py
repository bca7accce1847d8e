"""ProjectAggregate: agreement figures (checked against the krippendorff package), plots and progress."""

from __future__ import annotations

import datetime as dt

import krippendorff
import numpy as np
import pytest
from django.utils import timezone

from aggregation import services
from aggregation.models import ItemAggregate, ProjectAggregate
from annotation.models import Annotation, Assignment
from tests.aggregation.conftest import annotate_ifs, project_make

# LABELS[item] = per annotator (μ0, ν0, μ1, ν1) per-mille, None = not labelled
LABELS = [
    [(800, 100, 200, 600), (700, 200, 300, 500), (600, 100, 600, 100)],
    [(100, 800, 700, 100), (200, 600, 800, 100), None],
    [(500, 400, 500, 400), (300, 300, 300, 300), (900, 0, 0, 900)],
    [(400, 300, 400, 300), None, None],
    [None, None, None],
]


@pytest.fixture
def labelled():
    project, items, annotators = project_make(n_items=len(LABELS), overlap=2)
    for item, row in zip(items, LABELS, strict=True):
        for annotator, label in zip(annotators, row, strict=True):
            if label is not None:
                annotate_ifs(item, annotator, [(label[0], label[1]), (label[2], label[3])])
    return project, items, annotators


def _signed_matrix():
    s = np.full((len(LABELS), 3), np.nan)
    for i, row in enumerate(LABELS):
        for k, label in enumerate(row):
            if label is not None:
                s[i, k] = ((label[0] - label[1]) - (label[2] - label[3])) / 2000
    return s


@pytest.mark.django_db
def test_agreement_figures_match_the_reference_package(labelled):
    project, _, _ = labelled

    aggregate = services.project_agreement_recompute(project_id=project.pk)

    s = _signed_matrix()
    agreement = aggregate.agreement
    assert set(agreement) == {"pairwise_with_ties", "pairwise_without_ties", "alpha_interval", "alpha_nominal", "ifs"}
    expected_alpha = krippendorff.alpha(reliability_data=s.T, level_of_measurement="interval")
    assert agreement["alpha_interval"]["value"] == pytest.approx(expected_alpha)
    band = project.tie_tolerance / 2
    signs = np.where(np.isnan(s), np.nan, np.where(np.abs(s) < band, 0.0, np.sign(s)))
    expected_nominal = krippendorff.alpha(reliability_data=signs.T, level_of_measurement="nominal")
    assert agreement["alpha_nominal"]["value"] == pytest.approx(expected_nominal)
    agreeing = pairs = 0
    for row in signs:
        present = row[~np.isnan(row)]
        for a in range(len(present)):
            for b in range(a + 1, len(present)):
                pairs += 1
                agreeing += present[a] == present[b]
    assert agreement["pairwise_with_ties"] == pytest.approx(
        {
            "value": agreeing / pairs,
            "n": pairs,
            "ci": pytest.approx(agreement["pairwise_with_ties"]["ci"]),
            "items": int(((~np.isnan(s)).sum(axis=1) >= 2).sum()),
        }
    )
    for figure in agreement.values():
        low, high = figure["ci"]
        assert low <= figure["value"] + 1e-12
        assert figure["value"] <= high + 1e-12
    services.item_aggregates_recompute(project_id=project.pk)
    per_item = [a for a in ItemAggregate.objects.values_list("agreement", flat=True) if a is not None]
    assert agreement["ifs"]["value"] == pytest.approx(sum(per_item) / len(per_item))
    assert agreement["ifs"]["n"] == 3


@pytest.mark.django_db
def test_progress_counts_items_labels_and_skips(labelled):
    project, items, annotators = labelled
    now = timezone.now()
    Assignment.objects.create(
        project=project,
        item=items[4],
        annotator=annotators[2],
        status=Assignment.Status.SKIPPED,
        response_order=[0, 1],
        claimed_at=now,
        expires_at=now,
    )

    progress = services.project_agreement_recompute(project_id=project.pk).progress

    per_item = [sum(label is not None for label in row) for row in LABELS]
    assert progress["items_total"] == 5
    assert progress["overlap"] == 2
    assert progress["items_done"] == sum(n >= 2 for n in per_item)
    assert progress["labels_needed"] == 10
    assert progress["labels_done"] == sum(min(n, 2) for n in per_item)
    assert progress["labels_total"] == sum(per_item)
    by_annotator = {row["annotator_id"]: row for row in progress["annotators"]}
    for k, annotator in enumerate(annotators):
        assert by_annotator[annotator.pk]["labels"] == sum(row[k] is not None for row in LABELS)
        assert by_annotator[annotator.pk]["username"] == annotator.username
    assert by_annotator[annotators[2].pk]["skipped"] == 1


@pytest.mark.django_db
def test_plots_hold_histograms_time_series_and_weights(labelled):
    project, _, annotators = labelled
    # Move one annotator's labels to an earlier day so the time series has two points.
    Annotation.objects.filter(annotator=annotators[0]).update(created_at=timezone.now() - dt.timedelta(days=2))
    services.annotator_aggregates_recompute(project_id=project.pk)

    aggregate = services.project_agreement_recompute(project_id=project.pk)

    hesitation = aggregate.plots["hesitation"]
    assert len(hesitation["bins"]) == 11
    (criterion,) = hesitation["criteria"]
    values = [1000 - label[j] - label[j + 1] for row in LABELS for label in row if label is not None for j in (0, 2)]
    expected = [sum(100 * b <= v < 100 * (b + 1) or (b == 9 and v == 1000) for v in values) for b in range(10)]
    assert criterion["counts"] == expected
    over_time = aggregate.plots["agreement_over_time"]
    first_day = sum(row[0] is not None for row in LABELS)
    total = sum(label is not None for row in LABELS for label in row)
    assert [point["n_labels"] for point in over_time] == [first_day, total]
    assert over_time[-1]["alpha_interval"] == pytest.approx(aggregate.agreement["alpha_interval"]["value"])
    weights = aggregate.plots["weights"]
    assert {row["annotator_id"] for row in weights} == {a.pk for a in annotators}
    assert sum(row["weight"] for row in weights) == pytest.approx(1.0)
    assert aggregate.source_updated_at == Annotation.objects.order_by("-updated_at").first().updated_at
    assert ProjectAggregate.objects.filter(project=project).count() == 1
