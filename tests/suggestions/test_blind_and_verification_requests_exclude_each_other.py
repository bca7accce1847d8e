"""A person asked to verify an item (the model's answer on screen) is never also asked to label it blind, and one
who holds it blind is never asked to verify it: each draw leaves such a person out for that item."""

from __future__ import annotations

import pytest

from annotation.models import LabelRequest
from projects.models import Project
from suggestions.requests import label_requests_draw
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create

pytestmark = pytest.mark.django_db


def _project() -> Project:
    project = ProjectFactory(mode=Project.Mode.BINARY, blind_rate=0.0, overlap=1)
    for i in range(2):
        MembershipFactory(project=project, user=UserFactory(username=f"x{project.pk}-{i}"))
    for item in items_create(project, 12, prefix=f"x{project.pk}"):
        SuggestionFactory(item=item, preferred_position=0)
    return project


def _pairs(project: Project, kinds: tuple[str, ...]) -> set[tuple[int, int]]:
    rows = LabelRequest.objects.filter(project=project, kind__in=kinds).values_list("item_id", "annotator_id")
    return set(rows)


def test_a_verifier_is_left_out_of_the_blind_draws_for_that_item() -> None:
    project = _project()
    label_requests_draw(project=project, kind="verification", size=12, labels_per_item=1)
    draw = label_requests_draw(project=project, kind="certification", size=12, labels_per_item=2)
    verifying = _pairs(project, ("verification",))
    blind = _pairs(project, ("certification",))
    assert len(verifying) == 12
    assert verifying.isdisjoint(blind)
    # Every item still gets its one other person.
    assert draw.requests == 12
    assert draw.items_unstaffed == 0


def test_a_blind_holder_is_never_asked_to_verify_that_item() -> None:
    project = _project()
    label_requests_draw(project=project, kind="calibration", size=6, labels_per_item=1)
    label_requests_draw(project=project, kind="verification", size=12, labels_per_item=1)
    assert _pairs(project, ("calibration",)).isdisjoint(_pairs(project, ("verification",)))
