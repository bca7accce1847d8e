"""Two annotators asking at the same instant never both get an item's last open slot (row locks, SKIP LOCKED)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotation.models import Assignment
from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_claims_take_distinct_slots():
    project = ProjectFactory(overlap=1)
    users = [UserFactory(username=f"racer{n}") for n in range(6)]
    for user in users:
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(3, project=project)
    barrier = threading.Barrier(len(users))
    results: dict[str, int | None] = {}
    failures: list[BaseException] = []

    def claim(user):
        try:
            barrier.wait(timeout=10)
            assignment = assignment_claim_next(project=project, annotator=user)
            results[user.username] = assignment.item_id if assignment else None
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not failures
    taken = [item_id for item_id in results.values() if item_id is not None]
    assert len(taken) == 3, "three items with one slot each: three annotators get one, the others none"
    assert len(set(taken)) == 3
    assert Assignment.objects.filter(project=project, status=Assignment.Status.CLAIMED).count() == 3


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_first_saves_without_a_claim_make_one_annotation():
    """A double submit through the API (no claim yet): one annotation, one revision, no error."""
    from annotation.models import Annotation
    from annotation.services import annotation_save

    project = ProjectFactory(overlap=2)
    user = UserFactory(username="double-clicker")
    MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    item = ItemFactory(project=project)
    values = [{"response": p, "criterion": "overall", "mu": 500, "nu": 300} for p in (0, 1)]
    barrier = threading.Barrier(2)
    failures: list[BaseException] = []

    def save():
        try:
            barrier.wait(timeout=10)
            annotation_save(
                project=project,
                item=item,
                annotator=user,
                save=SaveRequest(values=values, client_token="same", source="api"),
            )
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=save) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not failures
    annotation = Annotation.objects.get(item=item, annotator=user)
    assert annotation.revisions.count() == 1
    item.refresh_from_db()
    assert item.annotation_count == 1
