"""A conversation imported from an HF conversational TRL file reads as a chat on a phone and a desktop: one bubble
per turn with its role in words, the system prompt folded until asked for, no sideways scrolling, and axe finds no
serious or critical violation."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects.models import Item, Membership, Project
from tests.browser.test_annotator_labels_by_touch_on_a_phone_in_chromium import DOCS_IMG, _no_page_overflow
from tests.browser.test_pages_pass_axe_in_chromium import _axe
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.formats.helpers import import_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1440])
def test_a_conversation_is_a_chat_with_the_system_prompt_folded(browser, live_server, login, shot, width):
    project = ProjectFactory(name=f"Chat {width}", mode=Project.Mode.IFS, overlap=1, blind_rate=0)
    annotator = UserFactory(username=f"ann-chat-{width}")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    import_items(project, "hf", "real/hf_trl_conversational_multiturn.jsonl")
    item = Item.objects.get(project=project, external_id="chat-1")
    context = browser.new_context(viewport={"width": width, "height": 844}, bypass_csp=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        login(page, annotator.username)
        page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
        page.wait_for_selector("ol.chat")
        roles = page.locator("ol.chat > li").evaluate_all("els => els.map(e => e.className)")
        assert roles == ["turn turn-system", "turn turn-user", "turn turn-assistant", "turn turn-user"]
        system = page.locator("li.turn-system details")
        assert system.get_attribute("open") is None
        assert not page.get_by_text("You are a careful assistant.").is_visible()
        _no_page_overflow(page)
        found = _axe(page)
        system.locator("summary").click()
        assert page.get_by_text("You are a careful assistant.").is_visible()
        page.locator("#prompt-card").screenshot(path=str(DOCS_IMG / f"chat-{width}.png"))
        shot(page, "chat")
    finally:
        context.close()
    assert found == [], found
