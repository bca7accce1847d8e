"""A link whose quota cannot hold the checks it requires is refused with a sentence that says what to change; and
"Item k of N" never undercounts: a participant served past the quota (a link made before the rule, a check still
due) reads a count that grows with the items, never "Item 4 of 4" on the fifth."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from annotation.crowd.models import StudyLink
from annotation.crowd.services import study_link_create
from projects.models import Item
from tests.annotation.conftest import next_url
from tests.annotation.study_helpers import current_item, enter_with_checks_last, label

_ITEM_NUMBER = re.compile(r'id="item-count">Item (\d+) of (\d+)<')


@pytest.fixture
def checks(project):
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    Item.objects.filter(pk__in=[i.pk for i in items[-2:]]).update(gold_position=0)
    return items[-2:]


def test_a_quota_too_small_for_its_checks_is_refused(project, lead, checks):
    with pytest.raises(ValidationError) as refused:
        study_link_create(
            project=project,
            created_by=lead,
            name="Too small",
            items_per_participant=4,
            attention_item_ids=[c.external_id for c in checks],
            attention_every=9,
            attention_min_answered=1,
        )
    message = " ".join(refused.value.message_dict["attention_min_answered"])
    assert "A quota of 4 items with one check in every 10 holds 0 checks" in message
    assert "raise the quota to at least 10" in message
    assert "one check after every 3 items or fewer" in message
    assert not StudyLink.objects.exists()


def test_a_quota_that_holds_its_checks_is_accepted(project, lead, checks):
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Fits",
        items_per_participant=4,
        attention_item_ids=[c.external_id for c in checks],
        attention_every=3,
        attention_min_answered=1,
    )
    assert link.pk is not None


def test_progress_never_undercounts_past_the_quota(project, lead, checks):
    # Made directly, as a link stored before the rule existed: its one required check may fall after the quota.
    link = StudyLink.objects.create(
        project=project,
        name="Old",
        token="old-link-token",
        completion_code="OLD-1",
        items_per_participant=2,
        attention_item_ids=[c.external_id for c in checks],
        attention_every=9,
        attention_min_answered=1,
    )
    client = Client()
    enter_with_checks_last(client, link, "counted", windows=1)  # the check falls after the quota
    shown = []
    while (item := current_item(client, project)) is not None:
        found = _ITEM_NUMBER.search(client.get(next_url(project)).content.decode())
        assert found is not None
        shown.append((int(found.group(1)), int(found.group(2))))
        label(client, project, item)
    assert len(shown) >= 3, "the quota of 2 was met, then a check was still due"
    for served, (number, total) in enumerate(shown, start=1):
        assert number == served, "no item is counted twice or left out"
        assert number <= total
