"""Each participant meets the link's attention checks in an order of their own (drawn from their seed): comparing
the addresses they were served does not single the checks out, and a reload keeps the order."""

from __future__ import annotations

from django.test import Client

from annotation.crowd.models import Participant
from annotation.crowd.services import check_order, study_link_create
from projects.models import Item
from tests.annotation.study_helpers import current_item, enter, label

SEEDS = [11, 22, 33, 44, 55, 66]


def test_participants_meet_the_checks_in_different_orders(project, lead):
    project.overlap = len(SEEDS) + 2  # every participant finds ordinary items left beside the checks
    project.save(update_fields=["overlap"])
    items = list(Item.objects.filter(project=project).order_by("queue_key"))
    pool = items[2:]
    Item.objects.filter(pk__in=[i.pk for i in pool]).update(gold_position=0)
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Pool",
        attention_item_ids=[i.external_id for i in pool],
        attention_every=1,
        attention_max_failures=10,
        items_per_participant=4,
    )
    orders = []
    for seed in SEEDS:
        client = Client()
        enter(client, link, f"p{seed}")
        Participant.objects.filter(external_id=f"p{seed}").update(check_seed=seed)
        served_checks = []
        while (item := current_item(client, project)) is not None:
            assert current_item(client, project) == item, "a reload shows the same item"
            if item in pool:
                served_checks.append(item.pk)
            label(client, project, item)
        assert served_checks, "every participant meets checks"
        expected = check_order(seed=seed, check_ids=[i.pk for i in pool])
        assert served_checks == expected[: len(served_checks)], "checks come in the participant's own order"
        orders.append(tuple(served_checks))
    assert len({order[0] for order in orders}) > 1, "the first check is not the same for everyone"
    assert len(set(orders)) > 1


def test_the_order_is_a_permutation_and_depends_on_the_seed():
    ids = list(range(1, 41))
    first, second = check_order(seed=1, check_ids=ids), check_order(seed=2, check_ids=ids)
    assert sorted(first) == ids
    assert sorted(second) == ids
    assert first != second
    assert check_order(seed=1, check_ids=list(reversed(ids))) == first, "the order depends on the seed, not the input"
