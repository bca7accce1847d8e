"""The Content-Security-Policy forbids inline script and <style> elements; the pages work under it and the browser
reports no violation on the annotation page (with a save through htmx), the dashboard or Swagger UI."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from projects.models import Membership, Project
from tests.dashboard.conftest import annotator_aggregates_create, item_aggregates_create, project_aggregate_create
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs before any page script (Playwright injects it outside the page's CSP) and records every violation event.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


def _watch(page) -> list[str]:
    console: list[str] = []
    page.add_init_script(RECORD_VIOLATIONS)
    page.on("console", lambda message: console.append(message.text))
    return console


def _violations(page, console: list[str]) -> list[str]:
    reported = page.evaluate("window.__cspViolations")
    return reported + [text for text in console if "Content Security Policy" in text]


def _project() -> tuple[Project, object, object]:
    project = ProjectFactory(name="CSP", suggestion_display=Project.SuggestionDisplay.BEFORE_LABEL, overlap=2)
    lead, annotator = UserFactory(username="lead-csp"), UserFactory(username="ann-csp")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    for item in ItemFactory.create_batch(2, project=project, is_blind=False):
        SuggestionFactory(item=item, preferred_position=1, rationale="Shorter and right.")
    return project, lead, annotator


def test_the_policy_is_sent_and_forbids_inline_script(client, project):
    client.force_login(project.memberships.get(role=Membership.Role.LEAD).user)
    policy = client.get(reverse("home"))["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert "unsafe" not in directives["default-src"]


def test_annotation_page_and_a_save_report_no_violation(page, live_server, login, shot):
    project, _, annotator = _project()
    console = _watch(page)
    login(page, annotator.username)
    item = project.items.first()
    page.goto(live_server.url + reverse("annotate_item", kwargs={"project_id": project.pk, "item_id": item.pk}))
    page.wait_for_selector("#annotate-form")
    assert page.locator("#suggestion-panel").is_visible()

    page.keyboard.press("j")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("s")
    page.wait_for_selector(".notice:has-text('Saved.')")  # htmx and annotate.js ran under the policy
    shot(page, "saved-under-csp")

    assert _violations(page, console) == []


def test_dashboard_reports_no_violation(page, live_server, login, shot):
    project, lead, annotator = _project()
    project.labelling_started_at = timezone.now()
    project.save(update_fields=["labelling_started_at"])
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=[annotator])
    project_aggregate_create(project=project, users=[annotator])
    console = _watch(page)
    login(page, lead.username)

    page.goto(live_server.url + reverse("dashboard", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#dashboard-figures")
    page.goto(live_server.url + reverse("project_settings", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#settings-form")
    shot(page, "settings-under-csp")

    assert _violations(page, console) == []


def test_swagger_ui_renders_under_its_own_policy(page, live_server, login, shot):
    UserFactory(username="api-reader")
    console = _watch(page)
    login(page, "api-reader")

    page.goto(live_server.url + reverse("api-docs"))
    page.wait_for_selector(".swagger-ui .info .title", timeout=20_000)
    shot(page, "swagger")

    assert "Penumbra API" in page.locator(".swagger-ui .info .title").inner_text()
    assert _violations(page, console) == []
