"""Every page passes axe-core (vendored from its npm package as tests/browser/assets/axe.min.js) with no serious or
critical violation: login, annotator home, annotation page (with a suggestion), dashboard, settings, item review,
suggestion card. axe runs in a context that bypasses the page's CSP (it is injected as a script), only here."""

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
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['impact']} {v['id']} on {len(v['nodes'])} elements: {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]


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
    for item in ItemFactory.create_batch(2, project=project, is_blind=False):
        SuggestionFactory(item=item, preferred_position=1, rationale="Response 2 is shorter and right.")
    project.labelling_started_at = timezone.now()
    project.save(update_fields=["labelling_started_at"])
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=[annotator])
    project_aggregate_create(project=project, users=[annotator])
    item = project.items.first()

    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
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
        page.context.clear_cookies()

        login(page, lead.username)
        pages = {
            "dashboard": reverse("dashboard", kwargs={"project_id": project.pk}),
            "settings": reverse("project_settings", kwargs={"project_id": project.pk}),
            "item review": reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk}),
            "suggestion card": reverse("suggestion_card", kwargs={"project_id": project.pk}),
        }
        for name, url in pages.items():
            page.goto(live_server.url + url)
            page.wait_for_load_state("load")
            found[name] = _axe(page)
            shot(page, name.replace(" ", "-"))
    finally:
        context.close()

    assert {name: problems for name, problems in found.items() if problems} == {}
