"""The time to Accept is the page's clock sent with the Accept click: stored with the Accept (clamped to the time
since the item was handed out, unknown when the page sent none), and the rubber-stamp signals judge an Accept by it
rather than by the label's whole time on the item."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation, SuggestionExposure
from annotation.saving import CLAIM_TIME_SLACK_MS
from projects.models import Membership, Project
from suggestions.rubber_stamp import reading_time_ms, rubber_stamp_signals
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def accepting():
    project = ProjectFactory(mode=Project.Mode.BINARY, suggestion_display=Project.SuggestionDisplay.BLIND_SAMPLE)
    person = UserFactory(username=f"acc-{project.pk}")
    MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    item = ItemFactory(project=project, is_blind=False, prompt=" ".join(["word"] * 200))
    SuggestionFactory(item=item, preferred_position=1)
    client = Client()
    client.force_login(person)
    client.get(reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))

    def accept(clock: object) -> SuggestionExposure:
        data = {} if clock is None else {"time_on_item_ms": clock}
        url = reverse("annotate_accept", kwargs={"project_id": project.pk, "item_id": item.pk})
        assert client.post(url, data).status_code == 200
        return SuggestionExposure.objects.filter(item=item, kind=SuggestionExposure.Kind.ACCEPT).latest("pk")

    return project, person, item, accept


def test_the_accept_stores_the_clock_clamped_or_unknown(accepting) -> None:
    _, _, _, accept = accepting
    assert accept("4200").time_on_item_ms == 4200
    # Not more than the time since the item was handed out, with the client's slack.
    assert accept(str(10**9)).time_on_item_ms <= CLAIM_TIME_SLACK_MS + 5000
    assert accept("soon").time_on_item_ms is None
    assert accept(None).time_on_item_ms is None


def test_rubber_stamp_judges_the_accept_by_its_click_not_by_the_whole_label(accepting) -> None:
    project, person, item, accept = accepting
    accept("3000")
    reading = reading_time_ms(200 + sum(len(r.text.split()) for r in item.responses.all()))
    # The label took longer than reading (the person adjusted after accepting); the click itself came in 3 s.
    Annotation.objects.create(
        project=project, item=item, annotator=person, binary_choice=1, suggestion_shown=True,
        accepted_suggestion=True, time_spent_ms=int(reading) + 10_000, response_order=[0, 1],
    )  # fmt: skip
    (row,) = rubber_stamp_signals(project=project)
    assert row["accepts"] == 1
    assert row["fast_accepts"] == 1
