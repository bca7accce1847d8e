"""The repeat draw is computed twice, in the queue's SQL and in Python (tests, exports): both must draw the same
labels, the hash value on the boundary (``rate · MODULUS``'s whole part) included, which the SQL leaves out."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.claims import assignment_new
from annotation.queue.order import (
    ANNOTATOR_MULTIPLIER,
    MODULUS,
    MULTIPLIER,
    repeat_drawn,
    repeat_threshold,
    repeat_to_serve,
)
from projects.models import Item
from tests.aggregation.conftest import annotate_binary
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

RATE = 0.5


def _item_id_with_draw(*, wanted: int, seed: int, annotator_id: int, after: int) -> int:
    item_id = after + 1
    while (item_id * MULTIPLIER + annotator_id * ANNOTATOR_MULTIPLIER + seed % MODULUS) % MODULUS != wanted:
        item_id += 1
    return item_id


@pytest.mark.django_db
def test_the_boundary_hash_is_not_drawn_by_either():
    project = ProjectFactory(mode="binary", repeat_rate=RATE, repeat_delay_items=0, repeat_delay_minutes=0)
    annotator = UserFactory(username="boundary")
    MembershipFactory(project=project, user=annotator, role="annotator")
    highest = (Item.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000
    threshold = repeat_threshold(RATE)
    on_boundary = _item_id_with_draw(wanted=threshold, seed=project.seed, annotator_id=annotator.pk, after=highest)
    below = _item_id_with_draw(wanted=threshold - 1, seed=project.seed, annotator_id=annotator.pk, after=on_boundary)
    assert not repeat_drawn(seed=project.seed, annotator_id=annotator.pk, item_id=on_boundary, rate=RATE)
    assert repeat_drawn(seed=project.seed, annotator_id=annotator.pk, item_id=below, rate=RATE)

    now = timezone.now()
    first = ItemFactory(project=project, id=on_boundary)
    assignment_new(project=project, item=first, annotator=annotator, now=now)
    annotate_binary(first, annotator, 0)
    assert repeat_to_serve(project=project, annotator_id=annotator.pk, now=timezone.now()) is None

    second = ItemFactory(project=project, id=below)
    assignment_new(project=project, item=second, annotator=annotator, now=now)
    annotate_binary(second, annotator, 1)
    served = repeat_to_serve(project=project, annotator_id=annotator.pk, now=timezone.now())
    assert served is not None
    assert served.item_id == below
