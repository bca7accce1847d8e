"""Accept records the time on item that the page's visible clock shows at the click (the rubber-stamp signals'
time to Accept), and the clock keeps running after Accept: the saved label counts the whole visible time on the
item, before and after the click."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotation, SuggestionExposure
from projects.models import Membership, Project
from suggestions.rubber_stamp import reading_time_ms, rubber_stamp_signals
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A key press, the htmx round trip and a busy machine fit in this.
MARGIN_MS = 2000
BEFORE_ACCEPT_MS = 2300
AFTER_ACCEPT_MS = 1500


def _clock_seconds(page) -> int:
    minutes, seconds = page.inner_text("#item-timer").split(":")
    return int(minutes) * 60 + int(seconds)


def test_accept_records_the_visible_clock_and_the_clock_does_not_restart(page, live_server, login):
    project = ProjectFactory(name="Accept clock", suggestion_display=Project.SuggestionDisplay.BLIND_SAMPLE, overlap=1)
    annotator = UserFactory(username="ann-accept-clock")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    # 150 words of prompt: reading it takes far longer than the Accept below.
    item = ItemFactory(project=project, is_blind=False, prompt=" ".join(["word"] * 150))
    SuggestionFactory(item=item, preferred_position=1, values=[(200, 600), (800, 100)])

    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
    page.wait_for_function('() => document.getElementById("annotate-frame")?.dataset.ready === "1"')
    page.wait_for_timeout(BEFORE_ACCEPT_MS)
    # The display ticks once a second, not in step with the wait above: let it catch up with the elapsed time.
    page.wait_for_function(
        """() => {
            const [minutes, seconds] = document.getElementById("item-timer").textContent.split(":");
            return Number(minutes) * 60 + Number(seconds) >= 2;
        }""",
        timeout=5000,
    )
    shown_at_click = _clock_seconds(page)
    assert shown_at_click >= 2
    page.click("#accept-button")
    page.wait_for_function(
        """() => {
            const frame = document.getElementById("annotate-frame");
            return frame && frame.dataset.justAccepted === "1" && frame.dataset.ready === "1";
        }"""
    )
    # The frame Accept brings back shows the same clock, still running: not 0:00.
    assert _clock_seconds(page) >= shown_at_click

    accept = SuggestionExposure.objects.get(item=item, annotator=annotator, kind=SuggestionExposure.Kind.ACCEPT)
    assert accept.time_on_item_ms is not None
    assert BEFORE_ACCEPT_MS <= accept.time_on_item_ms <= BEFORE_ACCEPT_MS + MARGIN_MS
    assert shown_at_click * 1000 <= accept.time_on_item_ms

    page.wait_for_timeout(AFTER_ACCEPT_MS)
    page.click("#save-button")
    page.wait_for_selector(".notice:has-text('Saved.')")
    label = Annotation.objects.get(item=item, annotator=annotator)
    assert label.accepted_suggestion
    whole = BEFORE_ACCEPT_MS + AFTER_ACCEPT_MS
    assert accept.time_on_item_ms + AFTER_ACCEPT_MS <= label.time_spent_ms <= whole + 2 * MARGIN_MS

    # The rubber-stamp signals judge the Accept by its own clock, which is faster than reading the item.
    assert accept.time_on_item_ms < reading_time_ms(150)
    (row,) = rubber_stamp_signals(project=project)
    assert row["accepts"] == 1
    assert row["fast_accepts"] == 1
