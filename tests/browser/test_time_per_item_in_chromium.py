"""Time on item is measured for every item of the single-page (HTMX) flow, not only the first one, and the time
the tab was hidden is left out (Page Visibility API)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotation
from projects.models import Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Everything between the end of a pause and the submit handler (a key press, htmx) fits in this, even on a busy
# machine; it stays below the hidden stretch below, so leaving that stretch out is what keeps the time in bounds.
MARGIN_MS = 2000
HIDDEN_MS = 3000

SET_VISIBILITY = """state => {
    Object.defineProperty(document, "visibilityState", {configurable: true, get: () => state});
    Object.defineProperty(document, "hidden", {configurable: true, get: () => state === "hidden"});
    document.dispatchEvent(new Event("visibilitychange"));
}"""


def _ready_item(page, previous: str | None) -> str:
    """Wait until a new item's frame is set up (its clock running) and return its id."""
    page.wait_for_function(
        """previous => {
            const frame = document.getElementById("annotate-frame");
            return frame && frame.dataset.ready === "1" && frame.dataset.item !== previous;
        }""",
        arg=previous,
    )
    return page.eval_on_selector("#annotate-frame", "frame => frame.dataset.item")


def _save(page, how: str) -> None:
    if how == "key":
        page.keyboard.press("s")
    else:
        page.click("#save-button")


def test_each_item_of_the_flow_gets_its_own_visible_time(page, live_server, login):
    project = ProjectFactory(name="Timing", suggestion_display=Project.SuggestionDisplay.BLIND_SAMPLE, overlap=1)
    annotator = UserFactory(username="ann-timing")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(5, project=project, is_blind=False)

    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))

    expected: dict[int, int] = {}
    item = None
    for pause_ms, how in ((1200, "key"), (2500, "click"), (600, "key")):
        item = _ready_item(page, item)
        page.wait_for_timeout(pause_ms)
        _save(page, how)
        expected[int(item)] = pause_ms

    # The fourth item: visible 600 ms, hidden HIDDEN_MS, visible 600 ms again.
    item = _ready_item(page, item)
    page.wait_for_timeout(600)
    page.evaluate(SET_VISIBILITY, "hidden")
    page.wait_for_timeout(HIDDEN_MS)
    page.evaluate(SET_VISIBILITY, "visible")
    page.wait_for_timeout(600)
    _save(page, "key")
    expected[int(item)] = 1200
    _ready_item(page, item)

    stored = dict(Annotation.objects.filter(project=project).values_list("item_id", "time_spent_ms"))
    assert stored.keys() == expected.keys()
    for item_id, pause_ms in expected.items():
        assert pause_ms <= stored[item_id] <= pause_ms + MARGIN_MS, (item_id, pause_ms, stored)
