"""Project recomputation while annotators save: the recompute reads annotations and their values from one
snapshot, so saves committing between its queries never break it (they once raised IndexError)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from aggregation.services import annotator_aggregates_recompute, item_aggregates_recompute
from annotation.models import Annotation
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SAVERS = 3
ITEMS = 12


def test_recomputing_during_concurrent_saves_raises_nothing():
    project = ProjectFactory(overlap=SAVERS)
    users = [UserFactory(username=f"saver{n}") for n in range(SAVERS)]
    for user in users:
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    items = ItemFactory.create_batch(ITEMS, project=project)
    done = threading.Event()
    failures: list[BaseException] = []
    recomputes = 0

    def save_all(user) -> None:
        try:
            for round_ in range(2):  # first saves, then edits (values deleted and written again)
                for item in items:
                    mu = 100 + 37 * round_
                    values = [{"response": p, "criterion": "overall", "mu": mu, "nu": 300} for p in (0, 1)]
                    annotation_save(
                        project=project, item=item, annotator=user, save=SaveRequest(values=values, source="api")
                    )
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)
        finally:
            connection.close()

    def recompute() -> None:
        nonlocal recomputes
        try:
            while not done.is_set():
                annotator_aggregates_recompute(project_id=project.pk)
                item_aggregates_recompute(project_id=project.pk)
                recomputes += 1
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    savers = [threading.Thread(target=save_all, args=(user,)) for user in users]
    recomputer = threading.Thread(target=recompute)
    recomputer.start()
    for thread in savers:
        thread.start()
    for thread in savers:
        thread.join(timeout=120)
    done.set()
    recomputer.join(timeout=120)

    assert not failures, failures
    assert recomputes >= 2, "the recomputation must have overlapped the saves"
    assert Annotation.objects.filter(project=project).count() == SAVERS * ITEMS
    # After the saves, one more run sees every label.
    assert item_aggregates_recompute(project_id=project.pk) == ITEMS
