"""A project's first recompute COPies its rows straight into the tables (chunk by chunk, each chunk committed on its
own, over more than one connection): the rows are those the ORM writer writes, and rows already there send the run
through the merge instead of failing."""

from __future__ import annotations

import pytest
from django.db.models import F

from aggregation import services, writers
from aggregation.models import ItemAggregate, ResponseAggregate
from annotation.models import JudgmentValue
from projects.models import Project
from tests.aggregation.conftest import annotate_ifs, project_make

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

N_ITEMS = 5


def _rows() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    items = sorted(
        ItemAggregate.objects.values_list("item_id", "best_position", "p_best", "margin", "agreement", "n_annotators")
    )
    responses = sorted(
        ResponseAggregate.objects.values_list("item_id", "response_id", "criterion_id", "operator", "mu", "nu"),
        key=lambda row: (row[0], row[1], row[2] or 0, row[3]),
    )
    return items, responses


def _orm_rows(monkeypatch, project_id: int) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """What the ORM writer (delete, insert) writes from the same judgments and weights."""
    monkeypatch.setattr(services, "COPY_THRESHOLD", 10**9)
    services.item_aggregates_recompute(project_id=project_id)
    return _rows()


@pytest.fixture
def project(monkeypatch):
    monkeypatch.setattr(services, "COPY_THRESHOLD", 1)
    monkeypatch.setattr(writers, "ITEM_CHUNK", 2)
    project, items, annotators = project_make(criteria=(("a", 0.5), ("b", 0.5)), n_items=N_ITEMS)
    for i, item in enumerate(items):
        for k, annotator in enumerate(annotators):
            annotate_ifs(item, annotator, [[(100 * (i + k) % 900, 50), (300, 200)], [(200, 100 * k), (500, 500)]])
    return project


def _chunk_writes(monkeypatch) -> list[int]:
    """Records the size of every chunk the first run writes on its own."""
    sizes: list[int] = []
    write = services._first_run_chunk_write

    def counted(**kwargs):
        sizes.append(int(kwargs["chunk"].size))
        write(**kwargs)

    monkeypatch.setattr(services, "_first_run_chunk_write", counted)
    return sizes


def test_a_first_run_chunk_by_chunk_writes_what_the_orm_writes(project, monkeypatch):
    sizes = _chunk_writes(monkeypatch)

    services.project_aggregates_recompute(project_id=project.pk)
    copied = _rows()

    assert sorted(sizes) == [1, 2, 2]
    assert len(copied[0]) == N_ITEMS
    assert len(copied[1]) == N_ITEMS * 2 * 3 * 3  # items × responses × (criteria + overall) × operators
    assert _orm_rows(monkeypatch, project.pk) == copied


@pytest.mark.parametrize("run", ["whole_project_chunked", "items_in_one_transaction"])
def test_a_first_run_that_meets_rows_already_there_merges_instead(project, monkeypatch, run):
    services.project_aggregates_recompute(project_id=project.pk)
    before = _rows()
    # New values, and a run that believes (as a first run racing a run over dirty items would) no row exists yet.
    JudgmentValue.objects.filter(annotation__item__project=project, response__position=0).update(mu=F("mu") / 2)
    monkeypatch.setattr(services, "_items_unwritten", lambda **_: True)
    sizes = _chunk_writes(monkeypatch)

    if run == "whole_project_chunked":
        Project.objects.filter(pk=project.pk).update(settings_version=F("settings_version") + 1)
        services.project_aggregates_recompute(project_id=project.pk)
        assert sorted(sizes) == [1, 2, 2]
    else:
        services.item_aggregates_recompute(project_id=project.pk)
    merged = _rows()

    assert merged != before
    assert _orm_rows(monkeypatch, project.pk) == merged


def test_a_response_row_left_without_its_item_aggregate_is_merged_away(project, monkeypatch):
    # Item 0's judgments under criterion b are gone, yet a row of its under b is there with no item aggregate: it
    # conflicts with no new cell, so only the merge (which the first run falls back to) removes it.
    item = project.items.order_by("pk").first()
    criterion_b = project.criteria.get(name="b")
    JudgmentValue.objects.filter(annotation__item=item, criterion=criterion_b).delete()
    ResponseAggregate.objects.create(
        item=item, response=item.responses.first(), criterion=criterion_b, operator="ifwa", mu=0.5, nu=0.2
    )

    services.project_aggregates_recompute(project_id=project.pk)

    assert not ResponseAggregate.objects.filter(item=item, criterion=criterion_b).exists()
    assert ItemAggregate.objects.count() == N_ITEMS
    assert _orm_rows(monkeypatch, project.pk) == _rows()
