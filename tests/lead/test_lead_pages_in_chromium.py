"""The lead's pages in Chromium: an export from the form to the downloaded file, the handoff confirmation, and
screenshots of every lead page at three viewport sizes with no horizontal overflow on a 390 px phone.

Screenshots go to test-artifacts/screenshots/ (git-ignored), kept as CI artifacts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from aggregation.exports.tasks import export_job_run
from annotation.models import Assignment, ItemNote
from projects.models import Job, Membership, Project, Response
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_evaluate
from tests.dashboard.conftest import annotator_aggregates_create, item_aggregates_create, project_aggregate_create
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import items_create, label

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
VIEWPORTS = [(1440, 900), (1024, 768), (390, 844)]


def _project() -> Project:
    """Eligible for handoff (20 blind items labelled once of overlap 2, 7 unlabelled), with figures and a flag."""
    project = ProjectFactory(name="Long-form QA", blind_rate=1.0, overlap=2, handoff_minimum_blind_comparisons=20)
    lead, person = UserFactory(username="lead-pages"), UserFactory(username="annotator-pages")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=person)
    items = items_create(project, 27)
    Response.objects.filter(item__project=project, position=0).update(model_name="gpt-4o")
    Response.objects.filter(item__project=project, position=1).update(model_name="llama-3-70b")
    first = items[0]
    first.prompt = "Why does ice float?<br />Answer in **two** sentences, with a reference to `density`."
    first.save(update_fields=["prompt"])
    for item in items:
        SuggestionFactory(item=item, preferred_position=0)
    for item in items[:20]:
        label(project, item, person, 0)
    item_aggregates_create(project=project)
    annotator_aggregates_create(project=project, users=[person])
    project_aggregate_create(project=project, users=[person])
    suggestion_figures_recompute(project_id=project.pk)
    handoff_evaluate(project_id=project.pk)
    Assignment.objects.create(
        project=project,
        item=first,
        annotator=person,
        response_order=[1, 0],
        claimed_at=first.created_at,
        expires_at=first.created_at,
        status=Assignment.Status.DONE,
    )
    ItemNote.objects.create(
        project=project, item=first, author=person, kind=ItemNote.Kind.FLAG, text="The prompt has a stray tag."
    )
    return project


# The elements sticking out past the window's right edge, innermost first, to name the culprit in the failure.
_OFFENDERS = """() => Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.dash-scroll, pre, table'))
  .filter(e => !Array.from(e.children).some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
  .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


def _no_horizontal_overflow(page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    offenders = page.evaluate(_OFFENDERS) if widths[0] > widths[1] else []
    assert widths[0] <= widths[1], f"{page.url}: content {widths[0]} px wide in a {widths[1]} px window: {offenders}"


def test_export_from_the_form_to_the_file(live_server, page, login, shot):
    project = _project()
    login(page, "lead-pages")
    page.goto(live_server.url + reverse("dashboard", kwargs={"project_id": project.pk}))
    page.click("nav.dash-tabs >> text=Export")
    page.select_option("#id_format", "annotations")
    page.fill("#id_min_annotators", "1")
    shot(page, "export-form")
    page.click("#export-form button[type=submit]")
    job = Job.objects.get(project=project, kind=Job.Kind.EXPORT)
    page.wait_for_url(live_server.url + reverse("export_job", kwargs={"project_id": project.pk, "job_id": job.pk}))
    export_job_run(job_id=job.pk)  # the worker's part (a no-op if a worker already took the job)
    page.wait_for_selector("#export-download", timeout=15_000)
    assert "Done" in page.inner_text("#export-status")
    assert "20 lines written" in page.inner_text("#export-status")
    shot(page, "export-done")
    with page.expect_download() as download_info:
        page.click("#export-download")
    rows = [json.loads(line) for line in Path(download_info.value.path()).read_text().splitlines()]
    assert len(rows) == 20
    assert {row["annotator"] for row in rows} == {"annotator-pages"}


def test_the_job_page_follows_progress_without_a_reload(live_server, page, login, shot):
    project = _project()
    job = Job.objects.create(project=project, kind=Job.Kind.EXPORT, options={"format": "dpo", "ties": "mark"})
    login(page, "lead-pages")
    page.goto(live_server.url + reverse("export_job", kwargs={"project_id": project.pk, "job_id": job.pk}))
    assert "Pending" in page.inner_text("#export-status")
    assert page.locator("#export-job [role=progressbar]").count() == 1
    assert page.locator("#export-download").count() == 0
    shot(page, "export-pending")

    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, progress_done=9, progress_total=27)
    page.wait_for_function("() => document.querySelector('#export-status').innerText.includes('9 of 27')")
    assert page.get_attribute("#export-job [role=progressbar]", "aria-valuenow") == "33"
    shot(page, "export-running")

    Job.objects.filter(pk=job.pk).update(status=Job.Status.PENDING, progress_done=0)
    export_job_run(job_id=job.pk)
    page.wait_for_selector("#export-download", timeout=15_000)
    assert "Done" in page.inner_text("#export-status")
    assert page.url.endswith(f"/export/{job.pk}/")  # swapped in place, no navigation


def test_handoff_asks_first_and_annotators_see_the_pause(live_server, page, login, shot):
    project = _project()
    login(page, "lead-pages")
    page.goto(live_server.url + reverse("suggestion_card", kwargs={"project_id": project.pk}))
    page.click("text=Hand off the remaining items…")
    assert page.inner_text("#handoff-to-llm") == "7"
    assert page.inner_text("#handoff-partly") == "20"
    project.refresh_from_db()
    assert project.phase == Project.Phase.COLLECTING  # the confirmation page changes nothing
    shot(page, "handoff-confirm")
    page.click("#handoff-confirm-button")
    page.wait_for_url(live_server.url + reverse("suggestion_card", kwargs={"project_id": project.pk}))
    project.refresh_from_db()
    assert project.phase == Project.Phase.HANDED_OFF

    page.context.clear_cookies()
    login(page, "annotator-pages")
    assert "Labelling is paused" in page.inner_text("main")
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
    assert "Labelling is paused:" in page.inner_text("main")
    shot(page, "annotator-paused")


def test_lead_pages_at_three_sizes(live_server, browser, login):
    project = _project()
    item = project.items.order_by("id").first()
    export = Job.objects.create(project=project, kind=Job.Kind.EXPORT, options={"format": "dpo"})
    export_job_run(job_id=export.pk)
    pages = {
        "dashboard": reverse("dashboard", kwargs={"project_id": project.pk}),
        "review": reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk}),
        "export": reverse("export_page", kwargs={"project_id": project.pk}),
        "export-job": reverse("export_job", kwargs={"project_id": project.pk, "job_id": export.pk}),
        "handoff": reverse("suggestion_handoff", kwargs={"project_id": project.pk}),
        "settings": reverse("project_settings", kwargs={"project_id": project.pk}),
    }
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in VIEWPORTS:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.set_default_timeout(10_000)
        page = context.new_page()
        login(page, "lead-pages")
        for name, url in pages.items():
            page.goto(live_server.url + url)
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}x{height}.png"), full_page=True)
            if width <= 390:
                _no_horizontal_overflow(page)
        context.close()
    assert len(list(SCREENSHOTS.glob("*-390x844.png"))) >= len(pages)
