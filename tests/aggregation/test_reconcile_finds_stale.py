"""Reconciliation finds aggregates older than their newest annotation (or missing) and recomputes them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from aggregation import services, tasks
from aggregation.models import ItemAggregate, ProjectAggregate
from annotation.models import Annotation
from tests.aggregation.conftest import annotate_ifs, project_make


@pytest.fixture
def labelled():
    project, items, annotators = project_make(n_items=3, n_annotators=2)
    for item in items[:2]:
        for annotator in annotators:
            annotate_ifs(item, annotator, [(700, 200), (300, 600)])
    return project, items, annotators


@pytest.mark.django_db
def test_items_and_projects_without_aggregates_are_stale(labelled):
    project, items, _ = labelled

    assert services.stale_items_list() == {project.pk: [items[0].pk, items[1].pk]}
    assert services.stale_projects_list() == [project.pk]


@pytest.mark.django_db
def test_a_newer_annotation_makes_its_item_and_project_stale_again(labelled):
    project, items, annotators = labelled
    services.item_aggregates_recompute(project_id=project.pk)
    services.project_agreement_recompute(project_id=project.pk)
    assert services.stale_items_list() == {}
    assert services.stale_projects_list() == []

    later = timezone.now() + dt.timedelta(seconds=5)
    Annotation.objects.filter(item=items[1], annotator=annotators[0]).update(updated_at=later)

    assert services.stale_items_list() == {project.pk: [items[1].pk]}
    assert services.stale_projects_list() == [project.pk]


@pytest.mark.django_db
def test_the_periodic_task_brings_everything_up_to_date(labelled):
    project, items, _ = labelled

    result = tasks.aggregates_reconcile()

    assert result == {"items": 2, "projects": 1}
    assert set(ItemAggregate.objects.values_list("item_id", flat=True)) == {items[0].pk, items[1].pk}
    assert ProjectAggregate.objects.get(project=project).agreement["ifs"]["n"] == 2
    assert services.stale_items_list() == {}
    assert services.stale_projects_list() == []
    assert tasks.aggregates_reconcile() == {"items": 0, "projects": 0}
