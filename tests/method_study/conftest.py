"""A small crossover study: six annotators, nine items with gold, three methods in blocks of three."""

from __future__ import annotations

import pytest

from tests.factories import ItemFactory, ProjectFactory, UserFactory
from tests.method_study.crossover import crossover_create, members_add


@pytest.fixture
def study(db):
    project = ProjectFactory(name="Methods", likert_points=5)
    lead = UserFactory(username="study-lead")
    people = [UserFactory(username=f"p{i}") for i in range(6)]
    members_add(project, lead=lead, annotators=people)
    items = ItemFactory.create_batch(9, project=project)
    for index, item in enumerate(items):
        item.gold_position = 0 if index % 3 else 1
        item.save(update_fields=["gold_position"])
    crossover_create(project, lead=lead, annotators=people, items=items, block_size=3)
    project.refresh_from_db()
    return project, lead, people
