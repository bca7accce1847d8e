"""Attention checks (items with gold) are mixed into a participant's queue, one in every N + 1 items (here pinned
last in each window; where it falls is drawn per participant, see test_attention_checks_are_indistinguishable), even
when the check already has all its labels; more than K answers against gold (a skip counts against) screen the
participant out: a distinct end page, no completion code (or the link's screened-out code), recorded as screened out."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant
from annotation.crowd.selectors import participant_record
from annotation.crowd.services import study_link_create
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Item
from tests.annotation.study_helpers import current_item, end_page, enter_with_checks_last, label, prefer


@pytest.fixture
def checks(project):
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    chosen = items[-2:]  # the last in queue order, so the normal queue would reach them last
    Item.objects.filter(pk__in=[i.pk for i in chosen]).update(gold_position=0)
    return chosen


def _walk(client, project, checks, *, answer_checks_with: int) -> list[Item]:
    served = []
    while (item := current_item(client, project)) is not None:
        served.append(item)
        label(client, project, item, prefer(item, answer_checks_with if item in checks else 0))
    return served


def test_checks_come_after_every_n_items_and_a_passing_participant_completes(project, lead, checks):
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Checked",
        completion_code="PASS-1",
        attention_item_ids=[c.external_id for c in checks],
        attention_every=2,
    )
    client = Client()
    enter_with_checks_last(client, link, "pid-A")
    served = _walk(client, project, checks, answer_checks_with=0)
    assert served[2] in checks, "the first check follows two other items"
    assert served[5] in checks, "the second check follows two more"
    assert "PASS-1" in end_page(client, link)
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.COMPLETED
    record = participant_record(participant=participant)
    assert (record.attention_passed, record.attention_failed) == (2, 0)


@pytest.mark.parametrize("screened_out_code", ["", "SCREENED-7"])
def test_a_failed_check_screens_the_participant_out(project, lead, checks, screened_out_code):
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Checked",
        completion_code="PASS-1",
        screened_out_code=screened_out_code,
        attention_item_ids=[c.external_id for c in checks],
        attention_every=2,
    )
    client = Client()
    enter_with_checks_last(client, link, "pid-A")
    served = _walk(client, project, checks, answer_checks_with=1)
    assert len(served) == 3, "the study ends right after the first failed check"
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.SCREENED_OUT
    assert participant.finished_at is not None
    page = end_page(client, link)
    assert "PASS-1" not in page
    assert 'data-status="screened_out"' in page
    if screened_out_code:
        assert screened_out_code in page
    else:
        assert "no completion code" in page
    participant.refresh_from_db()
    assert (participant.code_shown_at is not None) == bool(screened_out_code)


def test_k_failures_are_tolerated_and_the_next_one_screens_out(project, lead, checks):
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Lenient",
        attention_item_ids=[c.external_id for c in checks],
        attention_every=2,
        attention_max_failures=1,
    )
    client = Client()
    enter_with_checks_last(client, link, "pid-A")
    served = _walk(client, project, checks, answer_checks_with=1)
    assert len(served) == 6, "one failure is allowed; the second ends the study"
    assert Participant.objects.get().status == Participant.Status.SCREENED_OUT


def test_skipping_a_check_counts_as_failing_it(project, lead, checks):
    link = study_link_create(
        project=project, created_by=lead, name="Checked", attention_item_ids=[checks[0].external_id], attention_every=1
    )
    client = Client()
    enter_with_checks_last(client, link, "pid-A")
    label(client, project, current_item(client, project))
    check = current_item(client, project)
    assert check == checks[0]
    client.post(reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": check.pk}), {"skip_reason": "x"})
    assert current_item(client, project) is None
    assert Participant.objects.get().status == Participant.Status.SCREENED_OUT


def test_a_check_with_all_its_labels_is_still_served(project, lead, checks, annotator, annotator2):
    project.overlap = 2
    project.save(update_fields=["overlap"])
    check = checks[0]
    for person in (annotator, annotator2):
        annotation_save(project=project, item=check, annotator=person, save=SaveRequest(values=_values(check, 0)))
    link = study_link_create(
        project=project, created_by=lead, name="Checked", attention_item_ids=[check.external_id], attention_every=1
    )
    client = Client()
    enter_with_checks_last(client, link, "pid-A")
    label(client, project, current_item(client, project))
    assert current_item(client, project) == check
    label(client, project, check, prefer(check, 0))
    assert participant_record(participant=Participant.objects.get()).attention_passed == 1


def test_metadata_marks_checks_when_the_link_asks(project, lead, checks):
    marked = checks[0]
    marked.metadata = {"attention_check": True}
    marked.save(update_fields=["metadata"])
    link = study_link_create(
        project=project, created_by=lead, name="Meta", attention_from_metadata=True, attention_every=1
    )
    client = Client()
    enter_with_checks_last(client, link, "pid-A")
    label(client, project, current_item(client, project))
    assert current_item(client, project) == marked


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"attention_item_ids": ["nope"]}, "attention_item_ids", "No item with these ids"),
        ({"attention_every": 0}, "attention_every", "from 1"),
        ({"attention_max_failures": -1}, "attention_max_failures", "whole number"),
        ({"items_per_participant": "many"}, "items_per_participant", "whole number"),
        ({"completion_code": "has space"}, "completion_code", "letters, digits"),
        ({"completion_code": "SAME", "screened_out_code": "SAME"}, "screened_out_code", "must differ"),
        ({"name": "  "}, "name", "needs a name"),
    ],
)
def test_bad_link_settings_are_named(project, lead, kwargs, field, message):
    arguments = {"name": "Pilot", **kwargs}
    with pytest.raises(ValidationError) as refused:
        study_link_create(project=project, created_by=lead, **arguments)
    assert message in " ".join(refused.value.message_dict[field])


def test_checks_need_gold(project, lead):
    item = Item.objects.filter(project=project).first()
    with pytest.raises(ValidationError) as refused:
        study_link_create(project=project, created_by=lead, name="x", attention_item_ids=[item.external_id])
    assert "need gold" in refused.value.message_dict["attention_item_ids"][0]


def _values(item, position):
    criterion = item.project.criteria.get()
    return [
        {"response": r.position, "criterion": criterion.name, "mu": mu, "nu": nu}
        for r in item.responses.all()
        for mu, nu in [prefer(item, position)[r.position]]
    ]
