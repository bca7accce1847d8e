"""An annotator has an item open; in another browser the lead hands the project off. The open page's save is refused
with the paused message (nothing saved), and so is the next request: a reload, which used to serve a verification
request drawn before the handoff, and a colleague's reload of the claim they held."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotation, LabelRequest
from annotation.queue.services import assignment_claim_next
from projects.models import Item, Project
from tests.factories import UserFactory
from tests.suggestions.helpers import handoff_eligible_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _eligible() -> tuple[Project, object, object, object]:
    """The handoff rule is met (tests.suggestions.helpers.handoff_eligible_project); two more annotators."""
    lead, first, working, colleague = (UserFactory(username=n) for n in ("lead-h", "first-h", "work-h", "coll-h"))
    project = handoff_eligible_project(lead=lead, labeller=first, others=(working, colleague), name="Handoff")
    return project, lead, working, colleague


def test_the_open_page_and_the_next_request_are_refused_after_a_handoff(browser, live_server, login, shot):
    project, lead, working, colleague = _eligible()
    held = assignment_claim_next(project=project, annotator=colleague)  # the colleague's page is open too
    assert held is not None
    # A verification request drawn before the handoff, for the item the working annotator would get next.
    waiting = Item.objects.filter(project=project).exclude(pk=held.item_id).order_by("-pk").first()
    LabelRequest.objects.create(project=project, item=waiting, annotator=working, kind="verification")

    annotator_context = browser.new_context(viewport={"width": 1024, "height": 768})
    lead_context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        annotator_page, lead_page = annotator_context.new_page(), lead_context.new_page()
        login(annotator_page, working.username)
        annotator_page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
        annotator_page.wait_for_selector("#annotate-frame[data-ready='1']")
        annotator_page.keyboard.press("5")  # the new preset keys fill the open page: a real, valid label
        annotator_page.keyboard.press("2")
        shot(annotator_page, "open-item")

        login(lead_page, lead.username)
        lead_page.goto(live_server.url + reverse("suggestion_handoff", kwargs={"project_id": project.pk}))
        lead_page.click("#handoff-confirm-button")
        lead_page.wait_for_load_state("load")
        project.refresh_from_db()
        assert project.phase == Project.Phase.HANDED_OFF

        annotator_page.keyboard.press("s")
        annotator_page.wait_for_selector(".paused-note")
        shot(annotator_page, "save-refused")
        assert "Labelling is paused" in annotator_page.inner_text("#annotate-frame")
        assert annotator_page.locator("#annotate-form").count() == 0
        assert not Annotation.objects.filter(project=project, annotator=working).exists()

        annotator_page.reload()
        assert "Labelling is paused" in annotator_page.inner_text("#annotate-frame")
        assert annotator_page.locator("#annotate-form").count() == 0, "no verification item is served"

        annotator_context.clear_cookies()
        login(annotator_page, colleague.username)
        annotator_page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
        assert "Labelling is paused" in annotator_page.inner_text("#annotate-frame")
        assert annotator_page.locator("#annotate-form").count() == 0, "the held claim is not served"
        shot(annotator_page, "colleague-reload")
    finally:
        annotator_context.close()
        lead_context.close()
