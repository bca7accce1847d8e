"""The import page in Chromium at 1440 and 1024 px: a file dropped onto the form, the dry run's format and preview,
a bad file's errors by line, then the import with its progress and report. Screenshots in test-artifacts/browser/."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from projects.imports.tasks import import_items_job_run
from projects.models import Item, Job, Membership, Project
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = [(1440, 900), (1024, 768)]

GOOD = "\n".join(
    json.dumps({"id": f"q{i}", "prompt": f"Question number {i}?",
                "responses": [{"text": f"Answer A{i}", "model": "gpt-4o"},
                              {"text": f"Answer B{i}", "model": "llama-3"}],
                "metadata": {"topic": "physics", "expert_justification": "A is right"}})
    for i in range(3)
) + "\n"  # fmt: skip
BAD = GOOD + '{"id": "broken", "prompt": "Only one answer", "responses": ["alone"]}\n{not json\n'

# Drop a file on the zone as a person would drag one in: a DataTransfer with a File, then the drop event.
_DROP = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, {type: "application/jsonl"}));
  const zone = document.getElementById("import-drop");
  zone.dispatchEvent(new DragEvent("dragover", {dataTransfer: transfer, bubbles: true, cancelable: true}));
  zone.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
}"""


def _project() -> Project:
    project = ProjectFactory(name="Imports", mode=Project.Mode.IFS)
    MembershipFactory(project=project, user=UserFactory(username="lead-import"), role=Membership.Role.LEAD)
    return project


def _no_horizontal_overflow(page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{page.url}: content {widths[0]} px wide in a {widths[1]} px window"


def _dry_run(live_server, page, project, text: str):
    page.goto(live_server.url + reverse("dashboard", kwargs={"project_id": project.pk}))
    page.click("nav.dash-tabs >> text=Import")
    page.wait_for_selector("#import-form")
    # import.js is deferred: it listens for the drop only once it has run, which is before DOMContentLoaded. The form
    # can be in the page earlier, and a drop then falls on no listener (seen under load in CI).
    page.wait_for_load_state("domcontentloaded")
    page.evaluate(_DROP, ["items.jsonl", text])
    assert "items.jsonl" in page.inner_text("#import-file-name")
    before = set(Job.objects.filter(project=project).values_list("pk", flat=True))
    page.click("#import-submit")
    page.wait_for_url(lambda url: "/import/" in url and url.rstrip("/").split("/")[-1].isdigit())
    job = Job.objects.filter(project=project).exclude(pk__in=before).get()
    import_items_job_run(job_id=job.pk)  # the worker's part (a no-op if a worker already took the job)
    page.wait_for_selector("#import-counts", timeout=15_000)
    return job


@pytest.mark.parametrize(("width", "height"), VIEWPORTS, ids=[f"{w}px" for w, _ in VIEWPORTS])
def test_upload_preview_errors_import_and_report(live_server, browser, login, shot, width, height):
    project = _project()
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(10_000)
    page = context.new_page()
    login(page, "lead-import")

    # A bad file: every bad record is named by its line, and nothing can be imported.
    _dry_run(live_server, page, project, BAD)
    errors = page.inner_text("#import-errors")
    assert "line 4" in errors
    assert "line 5" in errors
    assert page.locator("#import-confirm").count() == 0
    _no_horizontal_overflow(page)
    shot(page, f"dry-run-errors-{width}")

    # A good file: the format, the first rows as Penumbra reads them, what goes to lead-only metadata.
    dry = _dry_run(live_server, page, project, GOOD)
    assert "Penumbra's own JSON Lines" in page.inner_text("#import-format")
    preview = page.inner_text("#import-preview")
    assert "Question number 0?" in preview
    assert "gpt-4o" in preview
    assert "lead-only: expert_justification" in preview
    assert not Item.objects.filter(project=project).exists()
    _no_horizontal_overflow(page)
    shot(page, f"dry-run-preview-{width}")

    page.click("#import-confirm button")
    page.wait_for_url(lambda url: not url.rstrip("/").endswith(f"/{dry.pk}") and "/import/" in url)
    real = Job.objects.filter(project=project, options__dry_run=False).get()
    import_items_job_run(job_id=real.pk)
    page.wait_for_function("() => document.querySelector('#import-status').innerText.includes('Done')", timeout=15_000)
    counts = page.inner_text("#import-counts")
    assert "Items created" in counts
    assert "3" in counts
    assert Item.objects.filter(project=project).count() == 3
    _no_horizontal_overflow(page)
    shot(page, f"import-report-{width}")
    context.close()
