"""Answered repeats give each annotator a self-consistency with its interval, and Eq. 8's consistency part uses it:
the annotator who repeats themselves exactly outweighs one who contradicts themselves, all else equal. Without
repeats the part stays empty and the settings page says the coefficient is not used."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from aggregation import services
from aggregation.models import AnnotatorAggregate, ProjectAggregate
from annotation.models import Annotation, Repeat, RepeatValue
from projects.models import Membership, Project
from tests.aggregation.conftest import annotate_ifs, project_make
from tests.factories import MembershipFactory

A = [(700, 100), (100, 700)]


def _repeat(item, annotator, values):
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    repeat = Repeat.objects.create(
        project_id=item.project_id,
        item=item,
        annotator=annotator,
        annotation=annotation,
        response_order=annotation.response_order,
        items_between=3,
        served_at=timezone.now(),
        answered_at=timezone.now(),
    )
    criterion = item.project.criteria.get()
    for response, (mu, nu) in zip(item.responses.order_by("position"), values, strict=True):
        RepeatValue.objects.create(repeat=repeat, response=response, criterion=criterion, mu=mu, nu=nu)


def test_consistency_comes_from_repeats_and_moves_the_weights(db):
    project, items, (steady, fickle, third) = project_make(n_items=6, n_annotators=3)
    for item in items:
        for person in (steady, fickle, third):
            annotate_ifs(item, person, A)
    services.project_aggregates_recompute(project_id=project.pk)
    assert set(AnnotatorAggregate.objects.filter(project=project).values_list("consistency", flat=True)) == {None}
    equal = dict(AnnotatorAggregate.objects.filter(project=project).values_list("annotator_id", "weight"))
    assert abs(equal[steady.pk] - equal[fickle.pk]) < 1e-9

    for n, item in enumerate(items[:4]):
        _repeat(item, steady, A)
        _repeat(item, fickle, [(100, 700), (700, 100)] if n % 2 else [(400, 300), (300, 400)])
    services.project_aggregates_recompute(project_id=project.pk)

    stored = {row.annotator_id: row for row in AnnotatorAggregate.objects.filter(project=project)}
    assert stored[steady.pk].consistency == 1.0
    assert stored[fickle.pk].consistency < 0.7
    assert stored[third.pk].consistency is None
    assert stored[steady.pk].weight > stored[fickle.pk].weight

    study = ProjectAggregate.objects.get(project=project).study
    rows = {row["annotator_id"]: row for row in study["consistency"]["annotators"]}
    assert rows[steady.pk]["n"] == 4
    assert rows[fickle.pk]["ci"][0] <= rows[fickle.pk]["consistency"] <= rows[fickle.pk]["ci"][1]
    assert study["repeats"]["answered"] == 8
    # The original judgments and their figures are untouched by the repeats.
    assert Annotation.objects.filter(project=project).count() == 18


def test_settings_page_says_consistency_is_unused_without_repeats(db, lead, lead_client):
    project, _, _ = project_make(n_items=1, n_annotators=1)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    url = reverse("project_settings", kwargs={"project_id": project.pk})
    assert "Not used: the repeat rate is 0" in lead_client.get(url).content.decode()
    Project.objects.filter(pk=project.pk).update(repeat_rate=0.1)
    page = lead_client.get(url).content.decode()
    assert "Not used: the repeat rate is 0" not in page
    assert "Not used yet: no repeat has been answered" in page
