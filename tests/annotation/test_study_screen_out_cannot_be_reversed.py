"""A screened-out participant stays screened out, whatever route they take afterwards: a POST of the other answer
straight to the check's address, "previous" and a save there, a skip, the REST API, a second browser with the same
id, or many requests at once. The check is judged on its first answer, each route is answered with the end page
(or the API's 404), nothing more is stored, and the completion code never shows; the same link pays a participant
who answers the check right, so the refusals are the rules', not a broken link."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant
from annotation.crowd.selectors import participant_record
from annotation.crowd.services import check_slot, participant_settle, study_link_create
from annotation.models import Annotation, AnnotationRevision
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Item
from tests.annotation.conftest import ifs_form, item_url
from tests.annotation.study_helpers import current_item, enter_with_checks_last, label, prefer

CODE = "PAID-37"


@pytest.fixture
def checks(project):
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    chosen = items[-2:]
    Item.objects.filter(pk__in=[i.pk for i in chosen]).update(gold_position=0)
    return chosen


@pytest.fixture
def link(project, lead, checks):
    return study_link_create(
        project=project,
        created_by=lead,
        name="Paid",
        completion_code=CODE,
        items_per_participant=4,
        attention_item_ids=[c.external_id for c in checks],
        attention_every=2,
        attention_max_failures=0,
        attention_min_answered=1,
    )


def _end_url(link) -> str:
    return reverse("study_end", kwargs={"token": link.token})


def _fail_first_check(client: Client, project, link, checks, pid: str) -> Item:
    """Work the queue up to the first check and answer it against gold; the check is last in its window, so the
    study is over from this save on (before any page has stored that)."""
    enter_with_checks_last(client, link, pid)
    while (item := current_item(client, project)) not in checks:
        assert item is not None
        label(client, project, item)
    label(client, project, item, prefer(item, 1))
    return item


def _right_answer(project, check: Item) -> dict[str, object]:
    return ifs_form(check, prefer(check, 0))


def _refused_with_the_end_page(response, link) -> None:
    assert response.status_code in (302, 303), response.content.decode()[:300]
    assert response["Location"] == _end_url(link)


def _route_repost(client, project, link, check, pid):
    _refused_with_the_end_page(client.post(item_url(project, check), _right_answer(project, check)), link)


def _route_previous(client, project, link, check, pid):
    previous = reverse("annotate_previous", kwargs={"project_id": project.pk})
    _refused_with_the_end_page(client.get(previous), link)
    _refused_with_the_end_page(client.get(item_url(project, check)), link)
    _refused_with_the_end_page(client.post(item_url(project, check), _right_answer(project, check)), link)


def _route_skip(client, project, link, check, pid):
    skip = reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": check.pk})
    _refused_with_the_end_page(client.post(skip, {"skip_reason": "unclear"}), link)


def _route_htmx_save(client, project, link, check, pid):
    response = client.post(item_url(project, check), _right_answer(project, check), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == _end_url(link)


def _route_api(client, project, link, check, pid):
    body = {
        "item": check.pk,
        "values": [{"position": 0, "mu": 0.8, "nu": 0.1}, {"position": 1, "mu": 0.1, "nu": 0.8}],
    }
    api = f"/api/projects/{project.pk}/annotations/"
    assert client.post(api, json.dumps(body), content_type="application/json").status_code == 404


def _route_second_browser(client, project, link, check, pid):
    second = Client()
    response = second.get(reverse("study_enter", kwargs={"token": link.token}) + f"?PROLIFIC_PID={pid}")
    assert response.status_code == 302
    _refused_with_the_end_page(second.post(item_url(project, check), _right_answer(project, check)), link)
    assert CODE not in second.get(_end_url(link)).content.decode()


ROUTES = {
    "repost-the-check": _route_repost,
    "previous-then-save": _route_previous,
    "skip": _route_skip,
    "htmx-save": _route_htmx_save,
    "rest-api": _route_api,
    "second-browser": _route_second_browser,
}


@pytest.mark.parametrize("stored_first", [True, False], ids=["after-the-end-page", "before-the-end-page"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_no_route_reverses_a_screen_out(project, link, checks, route, stored_first):
    client = Client()
    check = _fail_first_check(client, project, link, checks, "cheater")
    if stored_first:
        page = client.get(_end_url(link)).content.decode()
        assert 'data-status="screened_out"' in page
    ROUTES[route](client, project, link, check, "cheater")
    # Whatever the route said, the study is over and earns nothing.
    participant = Participant.objects.get(external_id="cheater")
    assert current_item(client, project) is None
    page = client.get(_end_url(link)).content.decode()
    assert CODE not in page
    assert 'data-status="screened_out"' in page
    participant.refresh_from_db()
    assert participant.status == Participant.Status.SCREENED_OUT
    assert _revisions(participant, check) == 1
    assert Annotation.objects.filter(annotator=participant.user).count() == 3, "nothing stored after the end"


def test_the_check_is_judged_on_its_first_answer(project, link, checks):
    """Below every view: a later revision with the right answer does not undo the failure."""
    client = Client()
    check = _fail_first_check(client, project, link, checks, "reviser")
    participant = Participant.objects.get(external_id="reviser")
    annotation_save(
        project=project,
        item=check,
        annotator=participant.user,
        save=SaveRequest(values=_values(check, 0)),
    )
    assert _revisions(participant, check) == 2
    record = participant_record(participant=participant)
    assert (record.attention_passed, record.attention_failed) == (0, 1)
    assert participant_settle(participant=participant).status == Participant.Status.SCREENED_OUT


def test_a_stored_screen_out_is_final_even_if_the_saves_changed(project, link, checks):
    """The store is the last word: a screened-out participant stays so even after their check's label is removed."""
    client = Client()
    check = _fail_first_check(client, project, link, checks, "final")
    client.get(_end_url(link))
    participant = Participant.objects.get(external_id="final")
    Annotation.objects.filter(annotator=participant.user, item=check).delete()
    assert participant_settle(participant=participant).status == Participant.Status.SCREENED_OUT


def test_the_end_does_not_come_at_the_failed_check(project, lead, checks):
    """With the check first in its window, the study goes on to the window's end: the end page does not follow the
    failed check, so it does not tell which item was the check."""
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Early check",
        attention_item_ids=[c.external_id for c in checks],
        attention_every=2,
    )
    client = Client()
    client.get(reverse("study_enter", kwargs={"token": link.token}) + "?PROLIFIC_PID=early")
    window = link.attention_every + 1
    seed = next(s for s in range(10_000) if check_slot(seed=s, window=window, index=0) == 0)
    Participant.objects.filter(external_id="early").update(check_seed=seed)
    first = current_item(client, project)
    assert first in checks
    label(client, project, first, prefer(first, 1))
    served_after = []
    while (item := current_item(client, project)) is not None:
        served_after.append(item)
        label(client, project, item)
    assert len(served_after) == window - 1, "the rest of the window is served, then the end"
    assert Participant.objects.get(external_id="early").status == Participant.Status.SCREENED_OUT
    page = client.get(_end_url(link)).content.decode()
    for item in [first, *served_after]:
        assert item.external_id not in page
        assert f"/items/{item.pk}/" not in page


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_requests_after_a_failed_check_store_nothing(project, link, checks):
    client = Client()
    check = _fail_first_check(client, project, link, checks, "racer")
    participant = Participant.objects.get(external_id="racer")
    skip = reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": check.pk})
    requests = [("post", item_url(project, check), _right_answer(project, check))] * 6 + [
        ("post", skip, {"skip_reason": "unclear"})
    ] * 2
    barrier = threading.Barrier(len(requests))
    answers: list[int] = []
    failures: list[BaseException] = []

    def send(method, url, data):
        browser = Client()
        browser.cookies = client.cookies
        try:
            barrier.wait(timeout=10)
            answers.append(getattr(browser, method)(url, data).status_code)
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=request) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    assert answers == [303] * len(requests)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.SCREENED_OUT
    assert _revisions(participant, check) == 1
    assert CODE not in client.get(_end_url(link)).content.decode()


def test_the_same_link_pays_a_participant_who_answers_the_check(project, link, checks):
    client = Client()
    enter_with_checks_last(client, link, "honest")
    while (item := current_item(client, project)) is not None:
        label(client, project, item, prefer(item, 0) if item in checks else None)
    assert CODE in client.get(_end_url(link)).content.decode()
    assert Participant.objects.get(external_id="honest").status == Participant.Status.COMPLETED


def _revisions(participant, check) -> int:
    return AnnotationRevision.objects.filter(annotation__annotator=participant.user, annotation__item=check).count()


def _values(item, position):
    criterion = item.project.criteria.get()
    return [
        {"response": r.position, "criterion": criterion.name, "mu": mu, "nu": nu}
        for r in item.responses.all()
        for mu, nu in [prefer(item, position)[r.position]]
    ]
