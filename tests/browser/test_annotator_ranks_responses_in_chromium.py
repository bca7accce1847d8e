"""An annotator ranks four responses in Chromium three ways, each saved and checked in the database: number keys
(best to worst), the up and down buttons (the focus stays on the button), and a touch drag by the row's handle on a
390 px phone. Nothing is saved as a ranking before the annotator acts; axe finds no serious or critical violation."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotation
from projects.models import Membership, Project
from tests.browser.test_annotator_labels_by_touch_on_a_phone_in_chromium import DOCS_IMG, _no_page_overflow
from tests.browser.test_pages_pass_axe_in_chromium import _axe
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _setup(username: str) -> tuple[Project, object]:
    project = ProjectFactory(name="Ranking", mode=Project.Mode.BINARY, overlap=1, blind_rate=0)
    annotator = UserFactory(username=username)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    ItemFactory(project=project, is_blind=False, responses=[f"Answer {n}." for n in range(4)])
    return project, annotator


def _shown_order(page) -> list[int]:
    return [int(p) for p in page.locator(".ranking-row").evaluate_all("els => els.map(e => e.dataset.position)")]


def _save_and_read(page, project) -> list[int]:
    page.keyboard.press("s")
    page.wait_for_selector("#annotate-frame[data-empty]")
    return Annotation.objects.get(project=project).ranking


def test_ranking_by_number_keys(page, live_server, login):
    project, annotator = _setup("ann-rank-keys")
    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#ranking-input")
    screen = _shown_order(page)  # keys 1..4 are the screen's A..D
    assert page.input_value("#ranking-value") == ""
    for key in "3142"[:3]:  # the fourth is placed by elimination
        page.keyboard.press(key)
    expected = [screen[2], screen[0], screen[3], screen[1]]
    assert _shown_order(page) == expected
    assert _save_and_read(page, project) == expected


def test_ranking_by_buttons_keeps_the_focus(page, live_server, login):
    project, annotator = _setup("ann-rank-buttons")
    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#ranking-input")
    screen = _shown_order(page)
    last_up = page.locator(".ranking-row").nth(3).locator(".ranking-move[data-step='-1']")
    last_up.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")  # the same button, still focused, moves the row up again
    assert _shown_order(page) == [screen[0], screen[3], screen[1], screen[2]]
    assert "2 / 4" in page.inner_text("#ranking-status")
    assert _save_and_read(page, project) == [screen[0], screen[3], screen[1], screen[2]]


def test_ranking_by_touch_drag_on_a_phone_without_overflow(browser, live_server, login):
    project, annotator = _setup("ann-rank-touch")
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, bypass_csp=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        login(page, annotator.username)
        page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
        page.wait_for_selector("#ranking-input")
        _no_page_overflow(page)
        found = _axe(page)
        screen = _shown_order(page)
        page.locator("#ranking-input").scroll_into_view_if_needed()
        handle = page.locator(".ranking-row").nth(0).locator(".ranking-handle").bounding_box()
        target = page.locator(".ranking-row").nth(2).bounding_box()
        assert handle is not None
        assert target is not None
        # A real touch drag through the browser's input pipeline (Chromium's DevTools protocol), which turns it into
        # pointer events of type "touch": from the handle of row one down past the middle of row three.
        x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
        end = target["y"] + target["height"] * 0.8
        touch = context.new_cdp_session(page)
        touch.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for step in range(1, 6):
            point = {"x": x, "y": y + (end - y) * step / 5}
            touch.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        expected = [screen[1], screen[2], screen[0], screen[3]]
        assert _shown_order(page) == expected
        page.locator("#ranking-input").screenshot(path=str(DOCS_IMG / "ranking-390.png"))
        assert _save_and_read(page, project) == expected
    finally:
        context.close()
    assert found == [], found
