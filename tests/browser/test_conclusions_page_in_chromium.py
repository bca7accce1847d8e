"""The conclusions page in Chromium: the lead reads the leaderboard per source with its plot, switches the human
sample, follows the JSON link, and the page passes axe and fits a 390 px phone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.aggregation.test_conclusions_figures_from_the_database import MODELS, _world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "assets" / "axe.min.js"
# The elements sticking out past the window's right edge, innermost first, to name the culprit in the failure.
_OFFENDERS = """() => Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.dash-scroll, pre, table'))
  .filter(e => !Array.from(e.children).some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
  .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


def test_lead_reads_the_leaderboard_and_switches_the_sample(live_server, page, login, shot, lead):
    project, _ = _world(lead)
    login(page, lead.username)
    page.goto(f"{live_server.url}/projects/{project.pk}/conclusions/")
    shot(page, "conclusions")

    blind = page.locator("#source-human_blind tbody tr")
    assert blind.count() == len(MODELS)
    assert sorted(blind.locator("th").all_inner_texts()) == sorted(MODELS)
    # One dot per model and source with a leaderboard, each with its interval in the tooltip.
    dots = page.locator("#leaderboard-plot svg circle")
    fitted = sum(
        page.locator(f"#source-{s} tbody tr").count()
        for s in ("human_all", "human_blind", "human_shown", "gold", "llm")
    )
    assert dots.count() == fitted > 0
    assert "95 % interval" in dots.first.locator("title").text_content()
    assert page.locator("#ppi-table tbody tr").count() >= 4
    assert "How often two annotators from the same pool agree" in page.inner_text("#conclusions-agreement")

    page.select_option("#sample", "certification")
    page.click("#conclusions-leaderboard button[type=submit]")
    page.wait_for_url("**sample=certification**")
    assert "Needs blind human labels on at least 2 items of the random sample" in page.inner_text("#ppi-empty")
    shot(page, "certification-sample")

    page.click("#conclusions-json")
    page.wait_for_url(f"**/api/projects/{project.pk}/conclusions/**")
    figures = json.loads(page.inner_text("body"))
    assert figures["sample"] == "certification"
    assert figures["models"] == list(MODELS)


def test_conclusions_page_passes_axe_and_fits_a_phone(live_server, browser, login, shot, lead):
    project, _ = _world(lead)
    # axe is injected as a script: only this context bypasses the page's CSP, as in the axe test of every page.
    context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    page = context.new_page()
    login(page, lead.username)
    page.goto(f"{live_server.url}/projects/{project.pk}/conclusions/")
    shot(page, "phone")
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], page.evaluate(_OFFENDERS)
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]
    context.close()
    assert serious == []
