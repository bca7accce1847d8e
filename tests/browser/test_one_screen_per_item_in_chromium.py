"""One screen per item: at laptop and tablet sizes the prompt, both responses and the first criterion's sliders are
in view without scrolling the page, even with PRD's long answers, the suggestion and the guidelines open; on a phone
the page stacks with no horizontal overflow. Also: one name per response on the annotator's page, and Accept keeps
the filled sliders in view and marks the item when it is revisited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from projects.models import Criterion, Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEMO = Path(__file__).resolve().parents[2] / "projects" / "demo_data" / "prd_lfqa_40.jsonl"
SIZES = [(1440, 900), (1024, 768)]


def _longest_demo_row() -> dict:
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    return max(rows, key=lambda row: sum(len(r["text"]) for r in row["responses"]))


def _setup(criteria: int = 1) -> tuple[Project, object, object]:
    row = _longest_demo_row()
    project = ProjectFactory(
        name="PRD long answers",
        suggestion_display=Project.SuggestionDisplay.BEFORE_LABEL,
        blind_rate=0,
        guidelines="Read both answers in full.\n\n" + "Prefer the answer a historian would sign. " * 30,
    )
    annotator = UserFactory(username="ann-long")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    item = ItemFactory(
        project=project, is_blind=False, prompt=row["prompt"], responses=[r["text"] for r in row["responses"]]
    )
    SuggestionFactory(item=item, preferred_position=1, rationale="Response 2 is the longest; Response 1 is vague.")
    return project, annotator, item


# A bounding box ignores clipping: an element cut off by a scrolling or overflow-hidden ancestor still has one.
CLIPPED_BY = """e => {
  const box = e.getBoundingClientRect();
  for (let a = e.parentElement; a; a = a.parentElement) {
    if (getComputedStyle(a).overflowY === "visible") continue;
    const r = a.getBoundingClientRect();
    if (box.top < r.top - 0.5 || box.bottom > r.bottom + 0.5) return a.className || a.tagName;
  }
  return null;
}"""


def _in_view(page, selector: str, width: int, height: int) -> None:
    for index in range(page.locator(selector).count()):
        box = page.locator(selector).nth(index).bounding_box()
        assert box is not None, f"{selector} #{index} is not rendered"
        assert page.locator(selector).nth(index).evaluate(CLIPPED_BY) is None, (selector, index, "clipped")
        assert box["x"] >= 0, (selector, index, box)
        assert box["y"] >= 0, (selector, index, box)
        assert box["x"] + box["width"] <= width + 0.5, (selector, index, box, width)
        assert box["y"] + box["height"] <= height + 0.5, (selector, index, box, height)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_prompt_responses_and_sliders_fit_one_screen(browser, live_server, login, shot, width, height):
    project, annotator, item = _setup()
    criterion = project.criteria.get()
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        login(page, annotator.username)
        page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
        page.wait_for_selector("#annotate-form")
        shot(page, f"first-visit-{width}x{height}")
        assert page.locator("details#guidelines").get_attribute("open") is not None, "guidelines open on a first visit"
        assert page.evaluate("window.scrollY") == 0
        _in_view(page, "#prompt-card h2", width, height)
        _in_view(page, "article.response h2", width, height)
        _in_view(page, f"fieldset[data-cell$='-{criterion.pk}'] input.slider", width, height)
        _in_view(page, f"fieldset[data-cell$='-{criterion.pk}'] .pi-line", width, height)
        _in_view(page, "#accept-button", width, height)
        _in_view(page, "#save-button", width, height)
        assert page.locator("article.response").count() == 2
        # Long texts scroll inside their card, not the page.
        assert page.evaluate("document.documentElement.scrollHeight") <= height + 1
        scrolls = page.eval_on_selector_all(".response-text", "es => es.map(e => e.scrollHeight > e.clientHeight)")
        assert any(scrolls), "the longest demo answer scrolls inside its card"

        # One name per response: the rationale uses this annotator's letters, never the stored numbers.
        order = page.eval_on_selector_all("article.response", "es => es.map(e => e.dataset.positionLabel)")
        assert sorted(order) == ["A", "B"]
        rationale = page.locator(".rationale").inner_text()
        assert "Response 1" not in rationale
        assert "Response 2" not in rationale
        preferred = page.locator("#suggestion-panel b").first.inner_text()
        assert preferred in rationale, (preferred, rationale)
        assert page.locator("#accept-button").inner_text().startswith("Accept the LLM's label")

        # Accept (key L) keeps the sliders in view, then a revisit of the saved item says where the label came from.
        page.keyboard.press("l")
        page.wait_for_selector(".notice:has-text('Suggestion accepted')")
        _in_view(page, f"fieldset[data-cell$='-{criterion.pk}'] input.slider", width, height)
        page.keyboard.press("s")
        page.wait_for_selector(".notice:has-text('Saved.')")
        page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
        assert page.locator("#accept-mark").inner_text() == "Filled by Accept"
        assert page.locator("details#guidelines").get_attribute("open") is None, "closed once the annotator has begun"
    finally:
        context.close()


def test_several_criteria_keep_the_first_in_view(browser, live_server, login, shot):
    project, annotator, item = _setup()
    for position, name in enumerate(("Accuracy", "Clarity", "Sources"), start=1):
        Criterion.objects.create(project=project, name=name, weight=0.25, position=position)
    first = project.criteria.first()
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    try:
        login(page, annotator.username)
        page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
        page.wait_for_selector("#annotate-form")
        shot(page, "four-criteria-1024x768")
        _in_view(page, f"fieldset[data-cell$='-{first.pk}'] input.slider", 1024, 768)
        _in_view(page, f"fieldset[data-cell$='-{first.pk}'] .pi-line", 1024, 768)
    finally:
        context.close()


def test_phone_stacks_without_horizontal_overflow(browser, live_server, login, shot):
    project, annotator, item = _setup()
    item.responses.filter(position=0).update(
        text="See https://example.org/" + "a-very-long-path-segment-without-breaks" * 6 + " for the source."
    )
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        login(page, annotator.username)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
        page.wait_for_selector("#annotate-form")
        shot(page, "phone-390")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        boxes = page.eval_on_selector_all("article.response", "es => es.map(e => e.getBoundingClientRect().top)")
        assert boxes[1] > boxes[0], "the responses stack"
    finally:
        context.close()
