"""Every place that turns a judgment into a preferred response gives the same answer, because each one goes
through projects.preference: the save path and resolution step (annotation.judgment.preferred_of_judgment), the
selector that reads a saved annotation (annotation_payload_preferred), the aggregation's signed preference and item
figures, and the handoff's figures for a suggestion. The database and the settings service refuse the same Likert
scales."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from hypothesis import given, settings
from hypothesis import strategies as st

from aggregation import services
from aggregation.figures.items import item_figures_compute
from aggregation.figures.judgments import Judgments, signed_preferences
from aggregation.figures.settings import FigureSettings
from aggregation.models import ItemAggregate
from annotation import judgment
from annotation.selectors import annotation_payload_preferred
from projects import preference
from projects.models import TIE, Project
from projects.services import project_update
from suggestions.handoff import _handoff_figures
from tests.aggregation.conftest import annotate_binary, annotate_ifs, annotate_likert, project_make

per_mille = st.tuples(st.integers(0, 1000), st.integers(0, 1000)).map(lambda p: (p[0], min(p[1], 1000 - p[0])))
tolerances = st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.5])


def _one_judgment(mode: str, *, choice=None, likert=None, points=7, mu=None, nu=None, weights=(1.0,), tolerance=0.1):
    """Arrays for one item with two responses and one annotator slot, as aggregation.loading would build them."""
    n_criteria = len(weights)
    present = mu is not None
    shape = (1, 2, n_criteria, 1)
    return Judgments(
        settings=FigureSettings(mode=mode, likert_points=points, tie_tolerance=tolerance),
        item_ids=np.array([1]),
        gold=np.array([-2]),
        n_responses=np.array([2]),
        response_ids=np.array([[1, 2]]),
        criterion_ids=np.arange(1, n_criteria + 1),
        criterion_weights=np.asarray(weights, dtype=np.float64),
        annotator_ids=np.array([1]),
        annotation_ids=np.array([1]),
        annotation_item=np.array([0]),
        annotation_annotator=np.array([0]),
        annotation_slot=np.array([0]),
        time_spent_ms=np.array([1000]),
        mu=np.asarray(mu, dtype=np.float64).reshape(shape) / 1000 if present else np.zeros(shape),
        nu=np.asarray(nu, dtype=np.float64).reshape(shape) / 1000 if present else np.zeros(shape),
        present=np.full(shape, present),
        slot_annotator=np.array([[0]]),
        binary=np.array([[np.nan if choice is None else float(choice)]]),
        likert=np.array([[np.nan if likert is None else float(likert)]]),
    )


def _project(mode: str, points: int = 7, tolerance: float = 0.1):
    return SimpleNamespace(mode=mode, likert_points=points, tie_tolerance=tolerance)


@settings(max_examples=200, deadline=None)
@given(choice=st.sampled_from([0, 1, TIE]))
def test_binary_choice_reads_the_same_everywhere(choice):
    expected = preference.preferred_position(mode="binary", choice=choice)
    assert expected == choice
    saved = judgment.preferred_of_judgment(
        project=_project("binary"), criteria=[], cleaned={}, choice=choice, point=None
    )
    assert saved == expected
    s = signed_preferences(_one_judgment("binary", choice=choice))[0, 0]
    assert preference.position_of_signed(s) == expected


@settings(max_examples=200, deadline=None)
@given(points=st.sampled_from(preference.LIKERT_POINTS), data=st.data())
def test_likert_point_reads_the_same_everywhere(points, data):
    value = data.draw(st.integers(1, points))
    expected = preference.preferred_position(mode="likert", likert_value=value, likert_points=points)
    assert expected == (0 if value < (points + 1) // 2 else 1 if value > (points + 1) // 2 else TIE)
    saved = judgment.preferred_of_judgment(
        project=_project("likert", points), criteria=[], cleaned={}, choice=None, point=value
    )
    assert saved == expected == judgment.preferred_from_likert(value, points)
    s = signed_preferences(_one_judgment("likert", likert=value, points=points))[0, 0]
    assert preference.position_of_signed(s) == expected
    # Accept's default point for a side is read back as that side.
    if expected != TIE:
        assert judgment.preferred_from_likert(judgment.likert_for_preferred(expected, points), points) == expected


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.tuples(per_mille, per_mille), min_size=1, max_size=3),
    raw_weights=st.lists(st.integers(1, 10), min_size=3, max_size=3),
    tolerance=tolerances,
)
def test_ifs_values_read_the_same_everywhere(values, raw_weights, tolerance):
    # Criterion weights that do not sum to one: the rule rescales them, as the aggregation does.
    weights = [float(w) for w in raw_weights[: len(values)]]
    names = [f"c{c}" for c in range(len(values))]
    criteria = [SimpleNamespace(name=n, weight=w) for n, w in zip(names, weights, strict=True)]
    cleaned = {(r, names[c]): values[c][r] for c in range(len(values)) for r in (0, 1)}
    rows = [(r, weights[c], *values[c][r]) for c in range(len(values)) for r in (0, 1)]
    expected = preference.preferred_position(mode="ifs", values=rows, tie_tolerance=tolerance)
    project = _project("ifs", tolerance=tolerance)
    saved = judgment.preferred_of_judgment(project=project, criteria=criteria, cleaned=cleaned, choice=None, point=None)
    assert saved == expected
    as_dicts = [{"response": r, "criterion": n, "mu": mu, "nu": nu} for (r, n), (mu, nu) in cleaned.items()]
    assert judgment.preferred_from_values(as_dicts, dict(zip(names, weights, strict=True)), tolerance) == expected

    mu = [[values[c][r][0] for c in range(len(values))] for r in (0, 1)]
    nu = [[values[c][r][1] for c in range(len(values))] for r in (0, 1)]
    data = _one_judgment("ifs", mu=mu, nu=nu, weights=weights, tolerance=tolerance)
    # One annotator: the weighted mean is the annotator's own values, so the item's best is the judgment's.
    assert int(item_figures_compute(data, np.ones(1)).best[0]) == expected
    s = signed_preferences(data)[0, 0]
    assert expected == TIE or preference.position_of_signed(s) == expected


@settings(max_examples=100, deadline=None)
@given(preferred=st.sampled_from([0, 1, TIE]), tolerance=tolerances)
def test_handoff_reads_a_suggestion_as_a_judgment(preferred, tolerance):
    from suggestions.handoff import _handoff_values

    mu, nu = _handoff_values(preferred, 2, {})
    project = SimpleNamespace(
        pk=1,
        mode="ifs",
        likert_points=7,
        tie_tolerance=tolerance,
        aggregation_operator="weighted_mean",
        settings_version=0,
        seed=0,
        overlap=3,
        weight_consistency=1 / 3,
        weight_expertise=1 / 3,
        weight_agreement=1 / 3,
    )
    handed = [(SimpleNamespace(pk=1), [SimpleNamespace(pk=10), SimpleNamespace(pk=11)], mu, nu)]
    best = int(_handoff_figures(project, handed).best[0])
    rows = [(r, 1.0, round(mu[r] * 1000), round(nu[r] * 1000)) for r in (0, 1)]
    assert best == preference.preferred_position(mode="ifs", values=rows, tie_tolerance=tolerance)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("mode", "label"),
    [
        ("ifs", [(700, 100), (200, 600)]),
        ("ifs", [(400, 300), (380, 300)]),
        ("ifs", [(100, 700), (600, 200)]),
        ("binary", 0),
        ("binary", 1),
        ("binary", TIE),
        ("likert", 2),
        ("likert", 4),
        ("likert", 6),
    ],
)
def test_saved_annotation_selector_and_item_aggregate_agree(mode, label):
    project, items, annotators = project_make(mode=mode, n_items=1, n_annotators=1, likert_points=7)
    write = {"ifs": annotate_ifs, "binary": annotate_binary, "likert": annotate_likert}[mode]
    annotation = write(items[0], annotators[0], label)
    criteria = list(project.criteria.all())
    read = annotation_payload_preferred(project=project, annotation=annotation, criteria=criteria)
    if mode == "ifs":
        rows = [(r, 1.0, *label[r]) for r in (0, 1)]
        expected = preference.preferred_position(mode="ifs", values=rows, tie_tolerance=project.tie_tolerance)
    else:
        expected = preference.preferred_position(
            mode=mode, choice=label if mode == "binary" else None, likert_value=label if mode == "likert" else None
        )
    assert read == expected
    services.item_aggregates_recompute(project_id=project.pk)
    aggregate = ItemAggregate.objects.get(item=items[0])
    if mode == "ifs":
        assert aggregate.best_position == expected
    else:
        assert preference.position_of_signed(aggregate.signed_preference) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("points", [1, 2, 4, 6, 8, 10, 12, 13])
def test_the_database_and_the_settings_service_refuse_the_same_scales(points):
    project = Project.objects.create(name="Scale", slug=f"scale-{points}")
    with pytest.raises(ValidationError) as refused:
        project_update(project=project, changes={"likert_points": points})
    assert "likert_points" in refused.value.message_dict
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.filter(pk=project.pk).update(likert_points=points)


@pytest.mark.django_db
@pytest.mark.parametrize("points", preference.LIKERT_POINTS)
def test_the_database_and_the_settings_service_accept_the_same_scales(points):
    project = Project.objects.create(name="Scale", slug=f"scale-ok-{points}")
    project_update(project=project, changes={"likert_points": points})
    project.refresh_from_db()
    assert project.likert_points == points
