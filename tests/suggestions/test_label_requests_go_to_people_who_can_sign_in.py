"""Label requests go only to people who can sign in and have not seen the item's suggestion: never to an imported
identity's shadow user (it cannot log in, so its requests would stay open forever), never to someone who labelled the
item (an imported label has no claim) or was shown its suggestion. An item with nobody left counts as unstaffed."""

from __future__ import annotations

import pytest

from annotation.models import LabelRequest, SuggestionExposure
from projects.imports.annotators import label_annotators_resolve
from projects.models import Project
from suggestions.requests import label_requests_draw
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = pytest.mark.django_db


def test_requests_skip_shadow_users_and_people_who_saw_the_item() -> None:
    project = ProjectFactory(mode=Project.Mode.BINARY, blind_rate=0.0, overlap=3)
    person = UserFactory(username=f"real-{project.pk}")
    MembershipFactory(project=project, user=person)
    users, _ = label_annotators_resolve(project=project, usernames=["imported-a", "imported-b"])
    shadows = list(users.values())
    items = items_create(project, 10, prefix=f"p{project.pk}")
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
        for shadow in shadows:  # imported labels saved with the suggestion on screen, and no claim
            label(project, item, shadow, 0, shown=True)
    label(project, items[0], person, 0)  # labelled by the person (no claim either, as an import would)
    SuggestionExposure.objects.create(project=project, item=items[1], annotator=person, kind="before_label")

    draw = label_requests_draw(project=project, kind="calibration", size=10, labels_per_item=2)

    asked = set(LabelRequest.objects.filter(project=project).values_list("annotator_id", flat=True))
    assert asked == {person.pk}, "only the person who can sign in is asked"
    requested = set(LabelRequest.objects.filter(project=project).values_list("item_id", flat=True))
    assert requested == {item.pk for item in items[2:]}
    assert draw.items_drawn == 10
    assert draw.requests == 8
    assert draw.items_unstaffed == 2, "the item they labelled and the item whose suggestion they saw"


def test_an_inactive_member_is_not_asked() -> None:
    project = ProjectFactory(mode=Project.Mode.BINARY, blind_rate=0.0)
    gone = UserFactory(username=f"gone-{project.pk}", is_active=False)
    MembershipFactory(project=project, user=gone)
    for item in items_create(project, 3, prefix=f"g{project.pk}"):
        SuggestionFactory(item=item, preferred_position=0)
    draw = label_requests_draw(project=project, kind="certification", size=3, labels_per_item=1)
    assert draw.requests == 0
    assert draw.items_unstaffed == 3
