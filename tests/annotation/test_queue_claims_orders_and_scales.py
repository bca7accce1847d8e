"""The queue: items not yet done by this annotator that still need labels, a lease on the last slot, expired claims
returning the item, a seeded per-annotator order, and a page whose query count does not grow with the project."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.judgment import queue_offset
from annotation.models import Assignment
from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from annotation.services import annotation_save, assignment_skip
from projects import blind
from projects.models import Item, Membership, Response
from tests.annotation.conftest import next_url
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory


def _save(project, item, user):
    values = [{"response": r.position, "criterion": "overall", "mu": 500, "nu": 200} for r in item.responses.all()]
    return annotation_save(project=project, item=item, annotator=user, save=SaveRequest(values=values))


def test_next_is_an_item_not_done_or_skipped_by_this_annotator(project, annotator):
    seen = []
    for _ in range(6):
        assignment = assignment_claim_next(project=project, annotator=annotator)
        seen.append(assignment.item_id)
        if len(seen) % 2:
            _save(project, assignment.item, annotator)
        else:
            assignment_skip(project=project, item=assignment.item, annotator=annotator, reason="unclear")
    assert len(set(seen)) == 6
    assert assignment_claim_next(project=project, annotator=annotator) is None


def test_a_reload_returns_the_same_claimed_item(project, annotator):
    first = assignment_claim_next(project=project, annotator=annotator)
    again = assignment_claim_next(project=project, annotator=annotator)
    assert first.pk == again.pk


def test_the_last_slot_is_not_taken_twice_and_an_expired_claim_returns_it(project, annotator, annotator2):
    project.overlap = 1
    project.save(update_fields=["overlap"])
    Item.objects.filter(project=project).exclude(pk=Item.objects.filter(project=project).first().pk).delete()
    taken = assignment_claim_next(project=project, annotator=annotator)
    assert taken is not None
    assert assignment_claim_next(project=project, annotator=annotator2) is None
    Assignment.objects.filter(pk=taken.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    returned = assignment_claim_next(project=project, annotator=annotator2)
    assert returned is not None
    assert returned.item_id == taken.item_id


def test_items_with_all_their_labels_are_not_offered(project, annotator, annotator2, lead):
    project.overlap = 1
    project.save(update_fields=["overlap"])
    for _ in range(6):
        assignment = assignment_claim_next(project=project, annotator=annotator2)
        _save(project, assignment.item, annotator2)
    assert assignment_claim_next(project=project, annotator=annotator) is None


def test_order_is_random_per_annotator_and_reproducible(project, annotator, annotator2):
    ItemFactory.create_batch(34, project=project)

    def walk(user):
        order = []
        while (assignment := assignment_claim_next(project=project, annotator=user)) is not None:
            order.append(assignment.item_id)
            assignment_skip(project=project, item=assignment.item, annotator=user, reason="walk")
        return order

    def expected(user):
        # The queue key circle, read from this annotator's own seeded starting point.
        offset = queue_offset(seed=project.seed, annotator_id=user.pk)
        keys = Item.objects.filter(project=project).values_list("pk", "queue_key")
        return [pk for pk, key in sorted(keys, key=lambda pair: (pair[1] - offset) % 1.0)]

    first, second = walk(annotator), walk(annotator2)
    assert first == expected(annotator)
    assert second == expected(annotator2)
    assert first != sorted(first), "not simply the import order"
    Assignment.objects.all().delete()
    assert walk(annotator) == first, "the same annotator gets the same order again"


def test_response_order_is_stored_and_kept(project, annotator):
    assignment = assignment_claim_next(project=project, annotator=annotator)
    order = assignment.response_order
    assert sorted(order) == [0, 1]
    annotation = _save(project, assignment.item, annotator)
    assert annotation.response_order == order
    orders = set()
    for _ in range(5):
        nxt = assignment_claim_next(project=project, annotator=annotator)
        orders.add(tuple(nxt.response_order))
        assignment_skip(project=project, item=nxt.item, annotator=annotator, reason="x")
    assert len(orders | {tuple(order)}) == 2, "both orders occur across items"


def _bulk_project(n: int, annotator):
    project = ProjectFactory(name=f"Big {n}")
    offset = queue_offset(seed=project.seed, annotator_id=annotator.pk)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    items = Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=f"b{i}",
                prompt=f"Prompt {i}",
                blind_draw=blind.uniform_draw(seed=project.seed, external_id=f"b{i}"),
                # Keys after this annotator's starting point, so that in both projects the first index range scan
                # finds the item (otherwise the wrap-around scan adds one query, in a small and a large project alike).
                queue_key=offset + (1 - offset) * blind.queue_key(seed=project.seed, external_id=f"b{i}") * 0.999,
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    Response.objects.bulk_create(
        [Response(item=item, position=p, text=f"answer {p}") for item in items for p in (0, 1)], batch_size=4000
    )
    return project


def _with_history(project, annotator):
    # The same state in both projects: some labelled history, then a fresh next-item request.
    for _ in range(3):
        assignment = assignment_claim_next(project=project, annotator=annotator)
        _save(project, assignment.item, annotator)


@pytest.mark.slow
def test_next_item_page_query_count_does_not_grow_with_the_project(db, client, django_assert_num_queries):
    annotator = UserFactory(username="scaler")
    small, large = _bulk_project(100, annotator), _bulk_project(10_000, annotator)
    client.force_login(annotator)
    _with_history(small, annotator)
    _with_history(large, annotator)
    # Both measured requests find the signed-in user in the cache (config.auth), as every request after the first.
    client.get(reverse("home"))
    with CaptureQueriesContext(connection) as queries:
        assert client.get(next_url(small)).status_code == 200
    small_count = len(queries)
    assert small_count <= 25
    with django_assert_num_queries(small_count):
        assert client.get(next_url(large)).status_code == 200
    # A reload (the claim already held) costs no more either.
    with django_assert_num_queries(small_count, exact=False):
        assert client.get(next_url(large)).status_code == 200
