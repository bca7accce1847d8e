"""annotation_save validates everything on the server; a refused save writes nothing at all."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Annotation, AnnotationRevision, Assignment, JudgmentValue
from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Item, Project
from tests.annotation.conftest import ifs_form, item_url
from tests.factories import ItemFactory


def _full(item, mu=600, nu=200):
    return [
        {"response": r.position, "criterion": c.name, "mu": mu, "nu": nu}
        for r in item.responses.all()
        for c in item.project.criteria.all()
    ]


def _nothing_written(item):
    assert not Annotation.objects.filter(item=item).exists()
    assert not JudgmentValue.objects.exists()
    assert not AnnotationRevision.objects.exists()
    item.refresh_from_db()
    assert item.annotation_count == 0
    assert Project.objects.get(pk=item.project_id).labelling_started_at is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda v: v[0].update(mu=700, nu=400), "values[{p}][overall]"),
        (lambda v: v[0].update(mu=-1), "values[{p}][overall]"),
        (lambda v: v[0].update(nu=1001), "values[{p}][overall]"),
        (lambda v: v[0].update(mu=12.5), "values[{p}][overall]"),
        (lambda v: v[0].update(mu=True), "values[{p}][overall]"),
        (lambda v: v[0].update(mu="lots"), "values[{p}][overall]"),
        (lambda v: v.pop(0), "values[{p}][overall]"),
        (lambda v: v.append(dict(v[0])), "values[{p}][overall]"),
        (lambda v: v[0].update(response=7), "values"),
        (lambda v: v[0].update(criterion="style"), "values"),
    ],
)
def test_bad_values_are_refused_by_field_and_nothing_is_written(project, annotator, claimed_item, change, field):
    values = _full(claimed_item)
    position = values[0]["response"]
    change(values)
    with pytest.raises(ValidationError) as refused:
        annotation_save(
            project=project, item=claimed_item, annotator=annotator, save=SaveRequest(values=values, client_token="t1")
        )
    assert field.format(p=position) in refused.value.message_dict
    _nothing_written(claimed_item)


def test_mu_plus_nu_over_one_names_the_sum(project, annotator, claimed_item):
    values = _full(claimed_item)
    values[1].update(mu=650, nu=360)
    with pytest.raises(ValidationError) as refused:
        annotation_save(project=project, item=claimed_item, annotator=annotator, save=SaveRequest(values=values))
    message = " ".join(refused.value.message_dict[f"values[{values[1]['response']}][overall]"])
    assert "101 %" in message
    assert "at most 100 %" in message


def test_choices_of_another_mode_are_refused(project, annotator, claimed_item):
    with pytest.raises(ValidationError):
        annotation_save(
            project=project,
            item=claimed_item,
            annotator=annotator,
            save=SaveRequest(values=_full(claimed_item), binary_choice=0),
        )
    _nothing_written(claimed_item)


def test_item_of_another_project_is_refused(project, other_project, annotator):
    foreign = Item.objects.filter(project=other_project).first()
    with pytest.raises(ValidationError) as refused:
        annotation_save(project=project, item=foreign, annotator=annotator, save=SaveRequest(values=_full(foreign)))
    assert "item" in refused.value.message_dict


def test_a_lead_or_outsider_cannot_save(project, lead, outsider, claimed_item):
    for user in (lead, outsider):
        with pytest.raises(ValidationError) as refused:
            annotation_save(
                project=project, item=claimed_item, annotator=user, save=SaveRequest(values=_full(claimed_item))
            )
        assert "annotator" in refused.value.message_dict
    _nothing_written(claimed_item)


def test_no_claim_and_no_room_is_refused(project, annotator, annotator2):
    project.overlap = 1
    project.save(update_fields=["overlap"])
    item = assignment_claim_next(project=project, annotator=annotator2).item
    with pytest.raises(ValidationError) as refused:
        annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(values=_full(item)))
    assert "__all__" in refused.value.message_dict
    assert not Annotation.objects.exists()


def test_accepted_without_an_accept_is_refused(project, annotator, claimed_item):
    with pytest.raises(ValidationError) as refused:
        annotation_save(
            project=project,
            item=claimed_item,
            annotator=annotator,
            save=SaveRequest(values=_full(claimed_item), accepted=True),
        )
    assert "accepted" in refused.value.message_dict
    _nothing_written(claimed_item)


def test_the_page_shows_messages_in_place_and_saves_nothing(project, annotator_client, claimed_item):
    data = ifs_form(claimed_item, {0: (700, 500)})
    response = annotator_client.post(item_url(project, claimed_item), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Nothing was saved" in html
    assert "120 %" in html
    assert 'value="700"' in html, "the annotator's own values are shown again, not reset"
    _nothing_written(claimed_item)


def test_a_good_save_writes_values_revision_count_and_starts_labelling(project, annotator, claimed_item):
    annotation = annotation_save(
        project=project,
        item=claimed_item,
        annotator=annotator,
        save=SaveRequest(values=_full(claimed_item, 333, 667), time_spent_ms=5000),
    )
    assert annotation.values.count() == 2
    assert set(annotation.values.values_list("mu", "nu")) == {(333, 667)}
    claimed_item.refresh_from_db()
    assert claimed_item.annotation_count == 1
    assert Project.objects.get(pk=project.pk).labelling_started_at is not None
    assert Assignment.objects.get(item=claimed_item, annotator=annotator).status == Assignment.Status.DONE
    revision = annotation.revisions.get()
    assert revision.payload["values"][0]["mu"] == 333
    assert annotation.response_order == Assignment.objects.get(item=claimed_item, annotator=annotator).response_order


def test_time_is_clamped_and_accumulates(project, annotator, claimed_item):
    first = annotation_save(
        project=project,
        item=claimed_item,
        annotator=annotator,
        save=SaveRequest(values=_full(claimed_item), time_spent_ms=10**9),
    )
    assert first.time_spent_ms <= 2 * 60 * 1000, "no more than the time since the claim plus slack"
    before = first.time_spent_ms
    second = annotation_save(
        project=project,
        item=claimed_item,
        annotator=annotator,
        save=SaveRequest(values=_full(claimed_item), time_spent_ms=1500),
    )
    assert second.time_spent_ms == before + 1500
    third = annotation_save(
        project=project,
        item=claimed_item,
        annotator=annotator,
        save=SaveRequest(values=_full(claimed_item), time_spent_ms=-50),
    )
    assert third.time_spent_ms == before + 1500


def test_three_criteria_need_every_cell(annotator):
    from tests.factories import MembershipFactory, ProjectFactory

    project = ProjectFactory(criteria=[("fluency", 0.3), ("accuracy", 0.5), ("safety", 0.2)])
    MembershipFactory(project=project, user=annotator)
    item = ItemFactory(project=project, responses=["a", "b", "c"])
    assignment_claim_next(project=project, annotator=annotator)
    values = _full(item)
    assert len(values) == 9
    with pytest.raises(ValidationError) as refused:
        annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(values=values[:-1]))
    assert "values[2][safety]" in refused.value.message_dict
    annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(values=values))
    assert JudgmentValue.objects.filter(annotation__item=item).count() == 9


def test_a_closed_project_takes_no_labels_and_offers_no_items(project, annotator, claimed_item):
    Project.objects.filter(pk=project.pk).update(phase=Project.Phase.CLOSED)
    project.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        annotation_save(
            project=project, item=claimed_item, annotator=annotator, save=SaveRequest(values=_full(claimed_item))
        )
    assert "closed" in " ".join(refused.value.message_dict["__all__"])
    assert assignment_claim_next(project=project, annotator=annotator) is None
    _nothing_written(claimed_item)
