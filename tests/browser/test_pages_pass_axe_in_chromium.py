"""Every page passes axe-core (vendored from its npm package as tests/browser/assets/axe.min.js) with no serious or
critical violation at 1024 × 768, where long answers scroll inside their cards: login, annotator home, the
annotation page (a suggestion, guidelines, long answers; then an answer expanded and focus mode), the empty queue,
and every lead page (dashboard, settings, item review, suggestion card, export, study links, method study and its
report, handoff). Every page also has one h1. axe runs in a context that bypasses the page's CSP (it is injected
as a script), only here."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from projects.models import Membership, Project
from tests.dashboard.conftest import annotator_aggregates_create, item_aggregates_create, project_aggregate_create
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "assets" / "axe.min.js"
BLOCKING = {"serious", "critical"}


def _axe(page) -> list[str]:
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    found = [
        f"{v['impact']} {v['id']} on {len(v['nodes'])} elements: {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]
    headings = page.locator("h1").count()
    if headings != 1:
        found.append(f"{headings} h1 elements, not one")
    return found


def test_every_page_has_no_serious_or_critical_violation(browser, live_server, login, shot):
    project = ProjectFactory(
        name="Axe",
        suggestion_display=Project.SuggestionDisplay.BEFORE_LABEL,
        overlap=2,
        blind_rate=0,
        guidelines="Prefer **correct** answers.",
    )
    lead, annotator = UserFactory(username="lead-axe"), UserFactory(username="ann-axe")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    long_answer = "\n\n".join(f"Paragraph {n}: " + "a sentence that takes room. " * 12 for n in range(12))
    for item in ItemFactory.create_batch(2, project=project, is_blind=False, responses=[long_answer, long_answer]):
        SuggestionFactory(item=item, preferred_position=1, rationale="Response 2 is shorter and right.")
    project.labelling_started_at = timezone.now()
    project.save(update_fields=["labelling_started_at"])
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=[annotator])
    project_aggregate_create(project=project, users=[annotator])
    item = project.items.first()
    empty = ProjectFactory(name="Nothing to do")
    MembershipFactory(project=empty, user=annotator, role=Membership.Role.ANNOTATOR)

    context = browser.new_context(viewport={"width": 1024, "height": 768}, bypass_csp=True)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        page.goto(live_server.url + reverse("login"))
        found["login"] = _axe(page)

        login(page, annotator.username)
        found["annotator home"] = _axe(page)
        page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
        page.wait_for_selector("#suggestion-panel")
        found["annotation page"] = _axe(page)
        page.locator(".response-text").first.focus()
        page.keyboard.press("e")
        page.wait_for_selector("article.response.expanded")
        found["annotation page, an answer expanded"] = _axe(page)
        page.keyboard.press("e")
        page.keyboard.press("f")
        page.wait_for_selector("#annotate-frame.focus-mode")
        found["annotation page, focus mode"] = _axe(page)
        page.keyboard.press("f")
        page.keyboard.press("d")
        page.wait_for_selector("#done-panel:not([hidden])")
        found["annotation page, done list open"] = _axe(page)
        page.goto(live_server.url + reverse("annotate_done", kwargs={"project_id": project.pk}))
        found["done items page"] = _axe(page)
        page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": empty.pk}))
        page.wait_for_selector("#annotate-frame[data-empty]")
        found["empty queue"] = _axe(page)
        page.context.clear_cookies()

        login(page, lead.username)
        pages = {
            "dashboard": reverse("dashboard", kwargs={"project_id": project.pk}),
            "settings": reverse("project_settings", kwargs={"project_id": project.pk}),
            "item review": reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk}),
            "suggestion card": reverse("suggestion_card", kwargs={"project_id": project.pk}),
            "export": reverse("export_page", kwargs={"project_id": project.pk}),
            "webhooks": reverse("webhooks_page", kwargs={"project_id": project.pk}),
            "study links": reverse("study_links", kwargs={"project_id": project.pk}),
            "method study": reverse("method_study", kwargs={"project_id": project.pk}),
            "method study report": reverse("method_study_report", kwargs={"project_id": project.pk}),
            "handoff": reverse("suggestion_handoff", kwargs={"project_id": project.pk}),
            "home": reverse("home"),
        }
        for name, url in pages.items():
            page.goto(live_server.url + url)
            page.wait_for_load_state("load")
            found[name] = _axe(page)
            shot(page, name.replace(" ", "-"))
    finally:
        context.close()

    assert {name: problems for name, problems in found.items() if problems} == {}
