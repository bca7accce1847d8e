"""The dashboard in a real browser: it refreshes its figures by itself, and settings errors appear in place."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from aggregation.models import ProjectAggregate
from projects.models import Membership, Project
from tests.dashboard.conftest import (
    annotator_aggregates_create,
    estimate,
    item_aggregates_create,
    project_aggregate_create,
)
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _computed_project() -> Project:
    project = ProjectFactory(name="Browser dashboard", labelling_started_at=timezone.now())
    MembershipFactory(project=project, user=UserFactory(username="lead-browser"), role=Membership.Role.LEAD)
    annotators = [UserFactory(username=f"ann-browser-{i}") for i in range(2)]
    for user in annotators:
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(4, project=project)
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=annotators)
    project_aggregate_create(project=project, users=annotators)
    return project


def test_figures_refresh_without_a_reload(live_server, page, login, shot):
    project = _computed_project()
    login(page, "lead-browser")
    page.goto(live_server.url + reverse("dashboard", kwargs={"project_id": project.pk}))
    figures = page.locator("#dashboard-figures")
    assert "0.540" in figures.inner_text()
    shot(page, "dashboard")

    aggregate = ProjectAggregate.objects.get(project=project)
    aggregate.agreement = {**aggregate.agreement, "alpha_interval": estimate(0.123)}
    aggregate.save(update_fields=["agreement"])

    # A function, not an expression string: Playwright evals expression strings, which the page's CSP forbids.
    page.wait_for_function(
        "() => document.querySelector('#dashboard-figures').innerText.includes('0.123')", timeout=15_000
    )
    assert page.url.endswith(f"/projects/{project.pk}/dashboard/")  # same page, fragment swapped in place
    assert page.locator("#dashboard-figures").count() == 1
    shot(page, "refreshed")


def test_settings_error_shows_next_to_its_field_in_place(live_server, page, login, shot):
    project = _computed_project()
    login(page, "lead-browser")
    page.goto(live_server.url + reverse("project_settings", kwargs={"project_id": project.pk}))
    page.fill("#id_overlap", "0")
    page.click("#settings-form button[type=submit]")
    error = page.locator("#id_overlap_error")
    error.wait_for()
    assert "Expected a whole number from 1 to 100." in error.inner_text()
    shot(page, "settings-error")
    project.refresh_from_db()
    assert project.overlap == 3


def test_the_index_reaches_every_section_and_folds_are_remembered(live_server, page, login, shot):
    project = _computed_project()
    login(page, "lead-browser")
    url = live_server.url + reverse("dashboard", kwargs={"project_id": project.pk})
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(url)
    links = page.locator("#dash-index a")
    targets = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert len(targets) >= 9
    for target in targets:
        assert page.locator(target).count() == 1, f"{target} has no section"
    # Every folding section of the page is in the index.
    sections = page.locator("#dashboard-figures section.card[id]")
    assert {f"#{sections.nth(i).get_attribute('id')}" for i in range(sections.count())} <= set(targets)

    page.click("#review .dash-fold")
    assert page.locator("#review .review-list, #review table, #review p").first.is_hidden()
    assert page.locator("#review .dash-fold").get_attribute("aria-expanded") == "false"
    # The index stays in view far down the page.
    page.click("#dash-index a[href='#hesitation']")
    assert page.locator("#dash-index").is_visible()
    box = page.locator("#dash-index").bounding_box()
    assert box is not None
    assert box["y"] <= 1
    shot(page, "folded")

    page.reload()
    page.wait_for_function("() => document.querySelector('#review .dash-fold') !== null", timeout=5_000)
    assert page.locator("#review").evaluate("(s) => s.classList.contains('is-folded')")
    assert page.locator("#progress").evaluate("(s) => !s.classList.contains('is-folded')")
    # After the figures refresh themselves (htmx swaps in a new #dashboard-figures every 10 s), the fold is applied
    # again. The old element is marked, so the wait ends when a new one replaced it, however late the poll comes.
    page.locator("#dashboard-figures").evaluate("e => { e.dataset.before = 'refresh'; }")
    page.wait_for_function("() => !document.querySelector('#dashboard-figures').dataset.before", timeout=30_000)
    page.wait_for_function("() => document.querySelector('#review .dash-fold') !== null", timeout=5_000)
    assert page.locator("#review").evaluate("(s) => s.classList.contains('is-folded')")
    # An index link unfolds a folded section.
    page.click("#dash-index a[href='#review']")
    assert page.locator("#review").evaluate("(s) => !s.classList.contains('is-folded')")
