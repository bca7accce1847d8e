"""The aggregates' foreign keys are enforced when the row is written, not at commit (a bulk first run would
otherwise queue a check per row and key until commit), and deleting what they point at still removes them."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from aggregation import services
from aggregation.models import ItemAggregate, ResponseAggregate
from projects.models import Criterion, Item, Project, Response
from tests.aggregation.conftest import annotate_ifs, project_make


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_response_row_without_its_item_fails_at_the_insert():
    project, items, _ = project_make(n_items=1, n_annotators=1)
    response = items[0].responses.first()
    missing_item = Item.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000

    with transaction.atomic():
        with pytest.raises(IntegrityError), transaction.atomic():
            ResponseAggregate.objects.create(item_id=missing_item, response=response, operator="ifwa", mu=0.5, nu=0.2)
        # The statement failed on its own: the rest of the transaction goes on.
        assert Project.objects.filter(pk=project.pk).exists()


@pytest.mark.django_db
def test_deleting_responses_criteria_items_and_projects_removes_their_aggregates():
    project, items, annotators = project_make(criteria=(("a", 0.5), ("b", 0.5)), n_items=3, n_annotators=2)
    for item in items:
        for annotator in annotators:
            annotate_ifs(item, annotator, [[(700, 100), (600, 200)], [(200, 600), (300, 300)]])
    services.project_aggregates_recompute(project_id=project.pk)
    assert ResponseAggregate.objects.count() == 3 * 2 * 3 * 3

    Response.objects.filter(pk=items[0].responses.first().pk).delete()
    assert ResponseAggregate.objects.count() == 3 * 2 * 3 * 3 - 3 * 3
    Criterion.objects.filter(project=project, name="b").delete()
    assert not ResponseAggregate.objects.filter(criterion__name="b").exists()
    Item.objects.filter(pk=items[1].pk).delete()
    assert not ResponseAggregate.objects.filter(item_id=items[1].pk).exists()
    assert not ItemAggregate.objects.filter(item_id=items[1].pk).exists()
    Project.objects.filter(pk=project.pk).delete()
    assert not ResponseAggregate.objects.exists()
    assert not ItemAggregate.objects.exists()
