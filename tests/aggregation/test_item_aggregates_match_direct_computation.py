"""Item and response aggregates equal a plain, loop-by-loop computation of the same formulas."""

from __future__ import annotations

import math
from itertools import combinations

import pytest
from django.utils import timezone

from aggregation import services
from aggregation.models import AnnotatorAggregate, ItemAggregate, Provenance, ResponseAggregate
from annotation.models import Annotation
from projects.models import TIE
from tests.aggregation.conftest import annotate_ifs, project_make

CRITERIA = (("accuracy", 0.7), ("style", 0.3))
# VALUES[item][annotator][position][criterion] = (μ, ν) per-mille
VALUES = [
    [
        [[(700, 200), (600, 100)], [(300, 500), (200, 600)]],
        [[(800, 100), (500, 300)], [(100, 700), (300, 300)]],
        [[(600, 300), (900, 0)], [(400, 400), (0, 900)]],
    ],
    [
        [[(200, 700), (100, 800)], [(900, 0), (800, 100)]],
        [[(300, 300), (200, 500)], [(600, 200), (700, 200)]],
    ],
]


def _cells(item_values):
    """{(position, criterion): [(μ, ν) floats per annotator]}"""
    cells: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for annotator_values in item_values:
        for position, per_criterion in enumerate(annotator_values):
            for c, (mu, nu) in enumerate(per_criterion):
                cells.setdefault((position, c), []).append((mu / 1000, nu / 1000))
    return cells


def _weighted_mean(pairs, weights):
    total = sum(weights)
    return (
        sum(w * mu for w, (mu, _) in zip(weights, pairs, strict=True)) / total,
        sum(w * nu for w, (_, nu) in zip(weights, pairs, strict=True)) / total,
    )


def _ifwa(pairs, weights, eps=1e-3):
    total = sum(weights)
    not_mu, nu_product = 1.0, 1.0
    for w, (mu, nu) in zip(weights, pairs, strict=True):
        not_mu *= (1 - min(max(mu, eps), 1 - eps)) ** (w / total)
        nu_product *= min(max(nu, eps), 1 - eps) ** (w / total)
    return 1 - not_mu, nu_product


def _ifwg(pairs, weights):
    total = sum(weights)
    mu_product, not_nu = 1.0, 1.0
    for w, (mu, nu) in zip(weights, pairs, strict=True):
        mu_product *= mu ** (w / total)
        not_nu *= (1 - nu) ** (w / total)
    return mu_product, 1 - not_nu


def _distance(a, b):
    d_mu, d_nu = a[0] - b[0], a[1] - b[1]
    return math.sqrt(0.5 * (d_mu**2 + d_nu**2 + (d_mu + d_nu) ** 2))


@pytest.fixture
def labelled():
    project, items, annotators = project_make(criteria=CRITERIA, n_items=3)
    for item, item_values in zip(items, VALUES, strict=False):
        for annotator, annotator_values in zip(annotators, item_values, strict=False):
            annotate_ifs(item, annotator, annotator_values)
    return project, items, annotators


def _check_item(project, item, item_values, weights):
    weights = weights[: len(item_values)]
    cells = _cells(item_values)
    stored = {
        (row.response.position, row.criterion_id, row.operator): (row.mu, row.nu)
        for row in ResponseAggregate.objects.filter(item=item).select_related("response")
    }
    criteria = list(project.criteria.order_by("position"))
    operators = {"weighted_mean": _weighted_mean, "ifwa": _ifwa, "ifwg": _ifwg}
    expected_overall = {}
    for operator, function in operators.items():
        for position in range(2):
            combined = [0.0, 0.0]
            for c, criterion in enumerate(criteria):
                mu, nu = function(cells[(position, c)], weights)
                assert stored[(position, criterion.pk, operator)] == pytest.approx((mu, nu), abs=1e-9)
                combined[0] += criterion.weight * mu
                combined[1] += criterion.weight * nu
            assert stored[(position, None, operator)] == pytest.approx(tuple(combined), abs=1e-9)
            expected_overall[(operator, position)] = combined
    assert len(stored) == 3 * 2 * (len(criteria) + 1)

    aggregate = ItemAggregate.objects.get(item=item)
    scores = [expected_overall[("weighted_mean", p)][0] - expected_overall[("weighted_mean", p)][1] for p in range(2)]
    gap = abs(scores[0] - scores[1])
    best = TIE if gap < project.tie_tolerance else scores.index(max(scores))
    assert aggregate.best_position == best
    assert aggregate.margin == pytest.approx(gap)
    assert aggregate.p_best == pytest.approx(0.5 + gap / 4)

    values = [v for annotator_values in item_values for per_c in annotator_values for v in per_c]
    assert aggregate.hesitation == pytest.approx(sum(1 - (mu + nu) / 1000 for mu, nu in values) / len(values))

    per_annotator = [
        [(mu / 1000, nu / 1000) for per_c in annotator_values for mu, nu in per_c] for annotator_values in item_values
    ]
    pair_distances = [
        sum(_distance(x, y) for x, y in zip(a, b, strict=True)) / len(a) for a, b in combinations(per_annotator, 2)
    ]
    assert aggregate.agreement == pytest.approx(1 - sum(pair_distances) / len(pair_distances))

    signed = []
    for annotator_values in item_values:
        s = [
            sum(cw * (mu - nu) / 1000 for (mu, nu), (_, cw) in zip(per_c, CRITERIA, strict=True))
            for per_c in annotator_values
        ]
        signed.append((s[0] - s[1]) / 2)
    assert aggregate.signed_preference == pytest.approx(
        sum(w * s for w, s in zip(weights, signed, strict=True)) / sum(weights)
    )
    assert aggregate.n_annotators == len(item_values)
    assert aggregate.provenance == Provenance.HUMAN
    assert aggregate.operator == "weighted_mean"
    newest = Annotation.objects.filter(item=item).order_by("-updated_at").first().updated_at
    assert aggregate.source_updated_at == newest
    assert aggregate.computed_at <= timezone.now()


@pytest.mark.django_db
def test_unweighted_aggregates_equal_the_formulas(labelled):
    project, items, _ = labelled

    written = services.item_aggregates_recompute(project_id=project.pk)

    assert written == 2
    _check_item(project, items[0], VALUES[0], [1.0, 1.0, 1.0])
    _check_item(project, items[1], VALUES[1], [1.0, 1.0, 1.0])
    assert not ItemAggregate.objects.filter(item=items[2]).exists()


@pytest.mark.django_db
def test_stored_annotator_weights_are_used(labelled):
    project, items, annotators = labelled
    weights = [0.6, 0.3, 0.1]
    for annotator, weight in zip(annotators, weights, strict=True):
        AnnotatorAggregate.objects.create(
            project=project, annotator=annotator, weight=weight, computed_at=timezone.now()
        )

    services.item_aggregates_recompute(project_id=project.pk, item_ids=[items[0].pk])

    _check_item(project, items[0], VALUES[0], weights)
    assert not ItemAggregate.objects.filter(item=items[1]).exists()


@pytest.mark.django_db
def test_ifwa_or_ifwg_projects_take_their_headline_from_their_operator(labelled):
    project, items, _ = labelled
    project.aggregation_operator = "ifwg"
    project.save()

    services.item_aggregates_recompute(project_id=project.pk)

    aggregate = ItemAggregate.objects.get(item=items[0])
    overall = {
        row.response.position: row.mu - row.nu
        for row in ResponseAggregate.objects.filter(item=items[0], criterion=None, operator="ifwg").select_related(
            "response"
        )
    }
    assert aggregate.operator == "ifwg"
    assert aggregate.margin == pytest.approx(abs(overall[0] - overall[1]))
