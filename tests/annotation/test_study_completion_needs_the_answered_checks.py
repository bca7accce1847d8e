"""The completion code needs the link's minimum of answered attention checks, with or without a quota: meeting the
quota with every check skipped (a skip is not an answer) is not a completion."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant
from annotation.crowd.selectors import ParticipantRecord, participant_end_state
from annotation.crowd.services import study_link_create
from projects.models import Item
from tests.annotation.study_helpers import current_item, enter_with_checks_last, label


@pytest.fixture
def checks(project):
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    Item.objects.filter(pk__in=[i.pk for i in items[-2:]]).update(gold_position=0)
    return items[-2:]


def _link(project, lead, checks, **extra):
    arguments = {
        "name": "Needs an answer",
        "completion_code": "ANSWERED",
        "attention_item_ids": [c.external_id for c in checks],
        "attention_every": 1,
        "attention_max_failures": 5,
        "attention_min_answered": 1,
        **extra,
    }
    return study_link_create(project=project, created_by=lead, **arguments)


@pytest.mark.parametrize("stored", [Participant.Status.ACTIVE, Participant.Status.COMPLETED])
@pytest.mark.parametrize("quota", [2, None])
def test_the_quota_without_an_answered_check_is_not_a_completion(project, lead, checks, quota, stored):
    link = _link(project, lead, checks, items_per_participant=quota)
    participant = Participant(link=link, status=stored)
    unanswered = ParticipantRecord(labelled=2, skipped=2, attention_failed=2, attention_skipped=2)
    answered = ParticipantRecord(labelled=2, attention_passed=1)
    assert participant_end_state(participant=participant, record=unanswered) == Participant.Status.ACTIVE
    expected = Participant.Status.COMPLETED if quota is not None or stored == Participant.Status.COMPLETED else "active"
    assert participant_end_state(participant=participant, record=answered) == expected


def test_skipping_every_check_never_earns_the_code(project, lead, checks):
    link = _link(project, lead, checks, items_per_participant=2)
    client = Client()
    enter_with_checks_last(client, link, "skipper")
    while (item := current_item(client, project)) is not None:
        if item in checks:
            skip = reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk})
            assert client.post(skip, {"skip_reason": "unclear"}).status_code == 302
        else:
            label(client, project, item)
    participant = Participant.objects.get(external_id="skipper")
    assert participant.status == Participant.Status.RETURNED, "both checks skipped: the minimum can no longer be met"
    assert "ANSWERED" not in client.get(reverse("study_end", kwargs={"token": link.token})).content.decode()
