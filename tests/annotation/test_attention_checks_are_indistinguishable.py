"""A participant cannot tell an attention check from any other item: not by the page (HTML, headers, the URL it is
served at, its item number), not by metadata or external ids, not by its place in the queue (drawn per participant
within each window, the same after a reload)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.test import Client

from annotation.crowd.models import Participant
from annotation.crowd.services import check_slot, checks_due, study_link_create
from projects.models import Item
from tests.annotation.conftest import ifs_form, item_url, next_url
from tests.annotation.study_helpers import enter, prefer

_ITEM_NUMBER = re.compile(r'id="item-count">Item (\d+) of (\d+)<')


def _shape(html: str, item: Item) -> str:
    """The page with what differs between any two items taken out: their texts, ids and per-request tokens."""
    for text in [item.prompt, *item.responses.values_list("text", flat=True)]:
        html = html.replace(text, "TEXT")
    html = re.sub(r"\b\d+\b", "N", html)
    html = re.sub(r'value="[0-9a-f]{32}"', 'value="TOKEN"', html)
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "CSRF", html)
    return re.sub(r'"X-CSRFToken": "[^"]+"', "CSRF", html)


@pytest.fixture
def link(project, lead):
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    for number, check in enumerate(items[-2:]):
        Item.objects.filter(pk=check.pk).update(
            gold_position=0, external_id=f"attention-check-{number}", metadata={"attention_check": True}
        )
    return study_link_create(
        project=project,
        created_by=lead,
        name="Blind checks",
        items_per_participant=4,
        attention_from_metadata=True,
        attention_every=1,
    )


def test_check_and_other_pages_look_the_same(project, link):
    client = Client()
    enter(client, link, "observer")
    checks = set(Item.objects.filter(project=project, gold_position__isnull=False).values_list("pk", flat=True))
    shapes: dict[bool, set[str]] = {True: set(), False: set()}
    headers: dict[bool, set[frozenset[str]]] = {True: set(), False: set()}
    numbers = []
    while True:
        response = client.get(next_url(project))
        if response.status_code == 302:
            break
        html = response.content.decode()
        item = Item.objects.get(pk=int(re.search(r'data-item="(\d+)"', html).group(1)))
        is_check = item.pk in checks
        assert "attention" not in html.lower()
        assert f"<code>{item.external_id}</code>" not in html, "participants see no external id"
        assert "gold" not in html.lower()
        assert client.get(next_url(project)).content.decode().count(f'data-item="{item.pk}"') == 1, "reload: same"
        shapes[is_check].add(_shape(html, item))
        headers[is_check].add(frozenset(k for k in response.headers if k.lower() != "content-length"))
        numbers.append(_ITEM_NUMBER.search(html).groups())
        saved = client.post(item_url(project, item), ifs_form(item, prefer(item, 0)))
        assert saved.status_code == 302
        assert saved["Location"] == next_url(project), "the same next step after a check as after any item"
    assert shapes[True], "the walk met a check"
    assert shapes[False]
    assert shapes[True] == shapes[False]
    assert headers[True] == headers[False]
    assert numbers == [("1", "4"), ("2", "4"), ("3", "4"), ("4", "4")], "checks count in 'Item k of 4'"
    assert Participant.objects.get().status == Participant.Status.COMPLETED


def test_a_checks_place_in_its_window_is_drawn_per_participant():
    window = 4
    slots = Counter(check_slot(seed=seed, window=window, index=0) for seed in range(400))
    assert set(slots) == set(range(window)), "every place in the window happens"
    assert min(slots.values()) > 60, slots  # roughly uniform: 100 expected each
    # Within one participant the windows differ too, and the draw is the same every time it is asked.
    places = [check_slot(seed=7, window=window, index=k) for k in range(20)]
    assert len(set(places)) > 1
    assert places == [check_slot(seed=7, window=window, index=k) for k in range(20)]


def test_exactly_one_check_falls_due_in_every_window():
    for seed in range(50):
        for every in (1, 2, 5):
            window = every + 1
            due = [checks_due(seed=seed, every=every, finished=n) for n in range(window * 6)]
            assert due == sorted(due)
            for k in range(6):
                assert due[k * window + window - 1] == k + 1
                assert due[k * window] in (k, k + 1)


def test_the_first_checks_position_varies_between_participants(project, lead, settings):
    settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR = 100  # every test participant comes from one address
    project.overlap = 12  # room for every participant on every item
    project.save(update_fields=["overlap"])
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    Item.objects.filter(pk=items[-1].pk).update(gold_position=0)
    link = study_link_create(
        project=project, created_by=lead, name="Spread", attention_item_ids=[items[-1].external_id], attention_every=3
    )
    positions = set()
    for number in range(12):
        client = Client()
        enter(client, link, f"p{number}")
        participant = Participant.objects.get(external_id=f"p{number}")
        expected = check_slot(seed=participant.check_seed, window=4, index=0)
        served = []
        for _ in range(4):
            html = client.get(next_url(project)).content.decode()
            item = Item.objects.get(pk=int(re.search(r'data-item="(\d+)"', html).group(1)))
            served.append(item.pk)
            client.post(item_url(project, item), ifs_form(item, prefer(item, 0)))
        position = served.index(items[-1].pk)
        assert position == expected
        positions.add(position)
    assert len(positions) > 1, "not always the N-th item"
