"""Two annotators asking at the same instant never both get an item's last open slot (row locks, SKIP LOCKED)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotation.models import Assignment
from annotation.services import assignment_claim_next
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
