"""Identical first saves racing through the API all answer alike: the save that created the label and its replays
(the same client token) answer 201; without a token exactly one save created it (201) and the others replaced it
(200). The status is decided after the service's lock, never by a look before it."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from annotation.models import Annotation
from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RACERS = 8
VALUES = [
    {"position": 0, "criterion": "overall", "mu": 0.7, "nu": 0.1},
    {"position": 1, "criterion": "overall", "mu": 0.2, "nu": 0.6},
]


def _race(body: dict) -> tuple[list[int], object]:
    project = ProjectFactory(overlap=2)
    user = UserFactory(username="racer")
    MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    item = ItemFactory(project=project)
    barrier = threading.Barrier(RACERS)
    statuses: list[int] = []
    failures: list[BaseException] = []

    def post() -> None:
        try:
            client = Client()
            client.force_login(user)
            barrier.wait(timeout=20)
            response = client.post(
                f"/api/projects/{project.pk}/annotations/",
                {"item": item.pk, **body},
                content_type="application/json",
            )
            statuses.append(response.status_code)
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    return sorted(statuses), Annotation.objects.get(item=item, annotator=user)


def test_replays_of_one_token_all_answer_created():
    statuses, annotation = _race({"values": VALUES, "client_token": "same-click"})

    assert statuses == [201] * RACERS
    assert annotation.revisions.count() == 1


def test_without_a_token_one_save_creates_and_the_rest_replace():
    statuses, annotation = _race({"values": VALUES})

    assert statuses == [200] * (RACERS - 1) + [201]
    assert annotation.revisions.count() == RACERS
