"""Which response a label prefers, per mode, and whether the comparison is blind or shown."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, AnnotationRevision, JudgmentValue, SuggestionExposure
from projects.models import TIE, Project
from suggestions.figures import comparisons_load, suggestion_figures_recompute
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import ifs_values_set, label, revision_payload

pytestmark = pytest.mark.django_db


def _project(mode: str, **settings) -> tuple[Project, list]:
    project = ProjectFactory(mode=mode, blind_rate=0.0, **settings)
    people = [UserFactory(username=f"{mode}-person-{k}") for k in range(2)]
    for person in people:
        MembershipFactory(project=project, user=person)
    return project, people


def test_ifs_prefers_the_higher_criterion_weighted_score_with_tie_tolerance():
    project, (first, second) = _project(Project.Mode.IFS, tie_tolerance=0.1, criteria=[("a", 0.75), ("b", 0.25)])
    item = ItemFactory(project=project)
    SuggestionFactory(item=item, preferred_position=0)
    criteria = list(project.criteria.order_by("position"))
    responses = list(item.responses.order_by("position"))
    # Criterion a (weight 0.75) favours response 0 strongly, b favours response 1: weighted S_0 − S_1 = 0.75·1 − 0.25·1.
    annotation = Annotation.objects.create(
        project=project, item=item, annotator=first, mode="ifs", response_order=[1, 0]
    )
    for criterion, (s0, s1) in zip(criteria, [((700, 200), (200, 700)), ((200, 700), (700, 200))], strict=True):
        JudgmentValue.objects.create(
            annotation=annotation, response=responses[0], criterion=criterion, mu=s0[0], nu=s0[1]
        )
        JudgmentValue.objects.create(
            annotation=annotation, response=responses[1], criterion=criterion, mu=s1[0], nu=s1[1]
        )
    # Scores 0.05 apart count as a tie under tolerance 0.1.
    close = Annotation.objects.create(project=project, item=item, annotator=second, mode="ifs", response_order=[0, 1])
    for criterion in criteria:
        JudgmentValue.objects.create(annotation=close, response=responses[0], criterion=criterion, mu=550, nu=300)
        JudgmentValue.objects.create(annotation=close, response=responses[1], criterion=criterion, mu=500, nu=300)

    comparisons = comparisons_load(project=project)
    by_annotator = dict(zip(comparisons.annotator_ids.tolist(), comparisons.human.tolist(), strict=True))
    assert by_annotator == {first.pk: 0, second.pk: TIE}


def test_binary_and_likert_use_the_annotators_side():
    binary, (b1, b2) = _project(Project.Mode.BINARY)
    item = ItemFactory(project=binary)
    SuggestionFactory(item=item, preferred_position=1)
    label(binary, item, b1, 1)
    label(binary, item, b2, TIE)
    assert sorted(comparisons_load(project=binary).match.tolist()) == [False, True]

    likert, (l1, l2) = _project(Project.Mode.LIKERT, likert_points=7)
    item = ItemFactory(project=likert)
    SuggestionFactory(item=item, preferred_position=TIE)
    label(likert, item, l1, TIE)  # the centre, 4 of 7
    label(likert, item, l2, 0)
    comparisons = comparisons_load(project=likert)
    assert sorted(comparisons.human.tolist()) == [TIE, 0]
    assert comparisons.match.sum() == 1


def test_incomplete_ifs_values_are_left_out_not_guessed():
    project, (first, _) = _project(Project.Mode.IFS)
    item = ItemFactory(project=project)
    SuggestionFactory(item=item, preferred_position=0)
    annotation = label(project, item, first, 0)
    JudgmentValue.objects.filter(annotation=annotation, response__position=1).delete()
    comparisons = comparisons_load(project=project)
    assert len(comparisons) == 0
    assert comparisons.undefined == 1


def test_failed_suggestions_are_never_compared():
    project, (first, _) = _project(Project.Mode.IFS)
    item = ItemFactory(project=project)
    SuggestionFactory(item=item, status="failed", preferred_position=None, failure_reason="timeout")
    label(project, item, first, 0)
    assert len(comparisons_load(project=project)) == 0


def test_a_change_at_the_after_label_resolution_keeps_the_unaided_label_as_the_blind_comparison():
    project, (first, second) = _project(Project.Mode.IFS, suggestion_display=Project.SuggestionDisplay.AFTER_LABEL)
    items = [ItemFactory(project=project) for _ in range(2)]
    for item in items:
        SuggestionFactory(item=item, preferred_position=1)
    # Both label unaided and disagree with the LLM.
    kept = label(project, items[0], first, 0)
    changed = label(project, items[1], second, 0)
    figures = suggestion_figures_recompute(project_id=project.pk)
    assert figures["unaided"]["agreement"]["n"] == 2
    assert figures["blind_sources"]["after_label"]["n"] == 2
    assert figures["shown"]["agreement"]["n"] == 0

    # The resolution page shows both of them the LLM's label; one keeps theirs, the other switches to the model's:
    # the switch is a save after an exposure (a shown revision), but the first revision stays their unaided label.
    for annotation in (kept, changed):
        SuggestionExposure.objects.create(
            project=project, item=annotation.item, annotator=annotation.annotator, kind="resolution"
        )
    ifs_values_set(changed, 1)
    Annotation.objects.filter(pk=changed.pk).update(suggestion_shown=True, revision_count=2)
    AnnotationRevision.objects.create(
        annotation=changed, number=2, payload=revision_payload(project, 1), suggestion_shown=True, reason="resolution"
    )

    figures = suggestion_figures_recompute(project_id=project.pk)
    comparisons = comparisons_load(project=project)
    blind = ~comparisons.shown
    # Both unaided labels still disagree: switching did not turn the disagreement into a missing label.
    assert sorted(comparisons.match[blind].tolist()) == [False, False]
    assert figures["unaided"]["agreement"]["n"] == 2
    assert figures["blind_sources"]["after_label"]["n"] == 2
    # The switched label is the shown comparison, and it agrees.
    assert comparisons.match[comparisons.shown].tolist() == [True]
    assert figures["shown"]["agreement"]["n"] == 1
    # Nothing here is in the random blind sample (rate 0): blind agreement has no evidence, whatever was switched.
    assert figures["blind"]["agreement"]["n"] == 0


def _queries_for_recompute(project: Project) -> int:
    with CaptureQueriesContext(connection) as context:
        suggestion_figures_recompute(project_id=project.pk)
    return len(context)


def test_figures_are_read_in_a_number_of_queries_that_does_not_grow_with_the_project():
    project, people = _project(Project.Mode.IFS)

    def add_items(count: int) -> None:
        for index in range(count):
            item = ItemFactory(project=project)
            SuggestionFactory(item=item, preferred_position=index % 2)
            for person in people:
                label(project, item, person, index % 2)

    add_items(4)
    suggestion_figures_recompute(project_id=project.pk)  # creates the aggregate row once
    small = _queries_for_recompute(project)
    add_items(16)
    assert _queries_for_recompute(project) == small
