"""A mouse drag across the μ + ν = 100 % boundary, both ways, is never dropped: the yield note appearing or going
does not move the slider under the pointer, so the drag ends where the mouse was released."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _value(page, selector: str) -> int:
    return int(page.eval_on_selector(selector, "e => e.value"))


def _drag(page, selector: str, start: float, end: float) -> None:
    box = page.locator(selector).bounding_box()
    y = box["y"] + box["height"] / 2
    # The thumb's centre travels between half a thumb from each end of the track.
    inset = 8

    def x(fraction: float) -> float:
        return box["x"] + inset + (box["width"] - 2 * inset) * fraction

    page.mouse.move(x(start), y)
    page.mouse.down()
    page.mouse.move(x(end), y, steps=25)
    page.mouse.up()


def test_drag_across_the_limit_both_ways(page, live_server, login, shot):
    project = ProjectFactory(name="Drag", blind_rate=0)
    annotator = UserFactory(username="ann-drag")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    # Long answers: the texts fill the card and would give up any height a note took, moving the sliders.
    long = "A long answer that scrolls inside its card. " * 200
    item = ItemFactory(project=project, is_blind=False, responses=[long, long + "More."])
    criterion = project.criteria.get()
    mu, nu = f"#mu-0-{criterion.pk}", f"#nu-0-{criterion.pk}"
    note = f"fieldset[data-cell='0-{criterion.pk}'] .yield-note"

    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
    page.wait_for_selector("#annotate-form")

    _drag(page, mu, 0.0, 0.7)
    assert 680 <= _value(page, mu) <= 720
    # ν from 0 up to 60 %: crosses μ + ν = 100 % at 30 %, so μ yields and the note appears mid-drag.
    _drag(page, nu, 0.0, 0.6)
    shot(page, "nu-dragged-past-the-limit")
    assert 580 <= _value(page, nu) <= 620, "the drag was not dropped when the note appeared"
    assert _value(page, mu) == 1000 - _value(page, nu)
    assert "μ lowered" in page.locator(note).inner_text()
    # And back down to 10 %: crosses the boundary the other way, the note goes, the drag still ends at the mouse.
    _drag(page, nu, 0.6, 0.1)
    shot(page, "nu-dragged-back")
    assert 80 <= _value(page, nu) <= 120, "the drag was not dropped when the note went"
    assert "lowered" not in page.locator(note).inner_text()
    assert page.eval_on_selector(nu, "e => e.getAttribute('aria-valuetext')") == f"{_value(page, nu) // 10} %"
