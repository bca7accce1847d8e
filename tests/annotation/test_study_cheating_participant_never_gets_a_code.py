"""The completion code is earned: a participant who tries every shortcut (the REST API, direct POSTs on items it was
not served, skips, replays of one save, a second browser, forged end-page requests) never sees it; the same link
gives it to a participant who does the work, so the cheater's failure is the rules', not a broken link."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from annotation.models import Annotation
from projects.models import Item
from tests.annotation.conftest import ifs_form, item_url, next_url
from tests.annotation.study_helpers import current_item, enter, prefer

CODE = "EARNED-1"


@pytest.fixture
def link(project, lead):
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    checks = items[-2:]
    Item.objects.filter(pk__in=[c.pk for c in checks]).update(gold_position=0)
    return study_link_create(
        project=project,
        created_by=lead,
        name="Paid",
        completion_code=CODE,
        items_per_participant=4,
        attention_item_ids=[c.external_id for c in checks],
        attention_every=2,
        attention_max_failures=1,
        attention_min_answered=1,
    )


class Watched:
    """A browser whose every answer is checked for the code."""

    def __init__(self) -> None:
        self.client = Client()
        self.seen: list[str] = []

    def __getattr__(self, name: str):
        method = getattr(self.client, name)
        if name not in ("get", "post", "put", "patch", "delete"):
            return method

        def call(*args, **kwargs):
            response = method(*args, **kwargs)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            self.seen.append(body.decode(errors="replace") + json.dumps(dict(response.headers)))
            return response

        return call

    def never_saw_the_code(self) -> bool:
        return not any(CODE in text for text in self.seen)


def test_a_cheating_participant_never_obtains_the_code(project, link):
    browser = Watched()
    enter(browser, link, "cheater")
    checks = set(Item.objects.filter(project=project, gold_position__isnull=False).values_list("pk", flat=True))
    unserved = Item.objects.filter(project=project).exclude(pk__in=checks).order_by("-queue_key").first()
    end = reverse("study_end", kwargs={"token": link.token})

    # The REST API: no labels, no items, no project of its own.
    api = f"/api/projects/{project.pk}/annotations/"
    body = {
        "item": unserved.pk,
        "values": [{"position": 0, "mu": 0.6, "nu": 0.2}, {"position": 1, "mu": 0.2, "nu": 0.6}],
    }
    assert browser.post(api, json.dumps(body), content_type="application/json").status_code == 404
    assert browser.get(f"/api/projects/{project.pk}/items/").status_code == 404
    assert (
        browser.post("/api/projects/", json.dumps({"name": "Mine"}), content_type="application/json").status_code == 404
    )
    # Direct POSTs on an item the queue did not serve: refused, nothing saved.
    assert browser.post(item_url(project, unserved), ifs_form(unserved)).status_code == 404
    assert (
        browser.post(
            reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": unserved.pk}), {"skip_reason": "x"}
        ).status_code
        == 404
    )
    assert not Annotation.objects.filter(annotator__study_participant__external_id="cheater").exists()

    # Work the queue, but never answer a check: skip the first, and from the second try to get away by reloading,
    # replaying an earlier save, the end page, a second browser with the same id.
    second = Watched()
    enter(second, link, "cheater")
    skipped_checks = 0
    last_saved = None
    for _ in range(12):
        item = current_item(browser, project)
        if item is None:
            break
        if item.pk in checks:
            if skipped_checks == 0:
                browser.post(
                    reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk}),
                    {"skip_reason": "unclear"},
                )
                skipped_checks += 1
                continue
            assert current_item(second, project) == item, "the other browser is served the same check"
            assert browser.get(end).status_code == 302
            assert browser.post(end, {"status": "completed"}).status_code == 405
            if last_saved is not None:  # replays of an earlier save: still one label
                for _ in range(3):
                    browser.post(item_url(project, last_saved), ifs_form(last_saved))
            assert current_item(browser, project) == item, "the check stays in the way"
            break
        browser.post(item_url(project, item), ifs_form(item))
        last_saved = item
    participant = Participant.objects.get(external_id="cheater")
    saved = Annotation.objects.filter(annotator=participant.user)
    assert saved.count() == saved.values("item").distinct().count()
    assert not saved.filter(item_id__in=checks).exists()
    assert browser.get(end).status_code in (200, 302)
    assert second.get(end).status_code in (200, 302)

    assert browser.never_saw_the_code()
    assert second.never_saw_the_code()
    participant.refresh_from_db()
    assert participant.status != Participant.Status.COMPLETED
    assert participant.code_shown_at is None


def test_skipping_everything_reaches_no_code(project, link):
    browser = Watched()
    enter(browser, link, "skipper")
    for _ in range(12):
        item = current_item(browser, project)
        if item is None:
            break
        browser.post(
            reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk}), {"skip_reason": "unclear"}
        )
    page = browser.get(reverse("study_end", kwargs={"token": link.token}))
    assert page.status_code == 200
    assert browser.never_saw_the_code()
    assert Participant.objects.get(external_id="skipper").status != Participant.Status.COMPLETED


def test_the_same_link_pays_a_participant_who_does_the_work(project, link):
    browser = Watched()
    enter(browser, link, "honest")
    checks = set(Item.objects.filter(project=project, gold_position__isnull=False).values_list("pk", flat=True))
    while (item := current_item(browser, project)) is not None:
        browser.post(item_url(project, item), ifs_form(item, prefer(item, 0) if item.pk in checks else None))
    assert browser.get(reverse("study_end", kwargs={"token": link.token})).status_code == 200
    assert not browser.never_saw_the_code()
    participant = Participant.objects.get(external_id="honest")
    assert participant.status == Participant.Status.COMPLETED
    assert Annotation.objects.filter(annotator=participant.user).count() == 4
    assert Annotation.objects.filter(annotator=participant.user, item_id__in=checks).exists()


def test_the_end_page_decides_again_from_stored_saves(project, link):
    """A stored "completed" that the saves do not support shows no code: the page sends the participant back."""
    browser = Watched()
    enter(browser, link, "forged")
    participant = Participant.objects.get(external_id="forged")
    Participant.objects.filter(pk=participant.pk).update(status=Participant.Status.COMPLETED)
    response = browser.get(reverse("study_end", kwargs={"token": link.token}))
    assert response.status_code == 302
    assert response["Location"] == next_url(project)
    assert browser.never_saw_the_code()
    participant.refresh_from_db()
    assert participant.status == Participant.Status.ACTIVE
