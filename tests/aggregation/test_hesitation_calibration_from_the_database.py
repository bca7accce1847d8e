"""Hesitation calibration from the database: each IFS annotation's hesitation and its disagreement with the others
on the item equal a hand count, a person whose hesitation rises on the items they get wrong is found to predict
their disagreement, one with too few labels is withheld, and the figures reach leads only."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import Client

from aggregation.hesitation import hesitation_pairs
from annotation.models import JudgmentValue
from projects.models import Membership, Project
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db


def _hesitate(annotation) -> None:
    """Keep the annotation's preference with hesitation 0.6 on every value: (300, 100) and (100, 300)."""
    for value in JudgmentValue.objects.filter(annotation=annotation):
        value.mu, value.nu = (300, 100) if value.mu > value.nu else (100, 300)
        value.save(update_fields=["mu", "nu"])


def test_a_person_whose_hesitation_marks_their_disagreements_is_found(lead, outsider) -> None:
    project = ProjectFactory(mode=Project.Mode.IFS, blind_rate=0.0, overlap=3)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"h{project.pk}-{i}") for i in range(3)]
    for person in people:
        MembershipFactory(project=project, user=person)
    items = items_create(project, 40, prefix=f"h{project.pk}")
    for index, item in enumerate(items):
        for k, person in enumerate(people):
            wrong = k == 0 and index % 3 == 0  # the first person disagrees on a third of the items…
            annotation = label(project, item, person, 1 if wrong else 0)
            if wrong:
                _hesitate(annotation)  # …and hesitates exactly there

    pairs = hesitation_pairs(project=project)
    first = pairs["annotator"] == people[0].pk
    assert first.sum() == 40
    wrong = np.array([index % 3 == 0 for index in range(40)])
    order = np.argsort(pairs["item"][first])
    assert pairs["disagreement"][first][order].tolist() == [1.0 if w else 0.0 for w in wrong]
    # Helper values: (800, 100) and (100, 800), hesitation 0.1; lowered ν leaves 0.6 on every value.
    assert pairs["hesitation"][first][order] == pytest.approx(np.where(wrong, 0.6, 0.1))

    client = Client()
    client.force_login(lead)
    answer = client.get(f"/api/projects/{project.pk}/hesitation/").json()
    by_person = {row["annotator"]: row for row in answer["annotators"]}
    assert by_person[people[0].pk]["slope"]["predicts"] is True
    assert answer["project"]["labels"] == 120
    assert sum(b["labels"] for b in answer["project"]["diagram"]) == 120
    client.force_login(outsider)
    assert client.get(f"/api/projects/{project.pk}/hesitation/").status_code == 404


def test_few_labels_and_other_modes_are_withheld(lead) -> None:
    project = ProjectFactory(mode=Project.Mode.IFS, blind_rate=0.0, overlap=2)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"w{project.pk}-{i}") for i in range(2)]
    for person in people:
        MembershipFactory(project=project, user=person)
    for item in items_create(project, 10, prefix=f"w{project.pk}"):
        for person in people:
            label(project, item, person, 0)
    client = Client()
    client.force_login(lead)
    answer = client.get(f"/api/projects/{project.pk}/hesitation/").json()
    assert all("fewer than 30" in row["withheld"] for row in answer["annotators"])
    binary = ProjectFactory(mode=Project.Mode.BINARY)
    MembershipFactory(project=binary, user=lead, role=Membership.Role.LEAD)
    assert "only IFS" in client.get(f"/api/projects/{binary.pk}/hesitation/").json()["withheld"]
