"""A small crossover study: six annotators, nine items with gold, three methods in blocks of three."""

from __future__ import annotations

import pytest

from annotation.studies.services import method_study_create
from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

METHODS = ["binary", "likert", "ifs"]


@pytest.fixture
def study(db):
    project = ProjectFactory(name="Methods", likert_points=5)
    lead = UserFactory(username="study-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"p{i}") for i in range(6)]
    for person in people:
        MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    items = ItemFactory.create_batch(9, project=project)
    for index, item in enumerate(items):
        item.gold_position = 0 if index % 3 else 1
        item.save(update_fields=["gold_position"])
    method_study_create(
        project=project,
        created_by=lead,
        methods=METHODS,
        item_ids=[i.pk for i in items],
        annotator_ids=[p.pk for p in people],
        block_size=3,
    )
    project.refresh_from_db()
    return project, lead, people
