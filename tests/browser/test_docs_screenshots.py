"""The documentation's pictures, taken from the real pages of the demo in Chromium, so they never go stale.

Each run writes docs/img/<name>.png (the README and the guides show them): the annotator's item page with its
sliders set at 1440 × 900 and on a 390 × 844 phone, the lead's dashboard, the import page after a dry run, the
export page and the study links page. Commit the files when a page changed on purpose.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import LabelRequest
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.imports.tasks import import_items_job_run
from projects.models import TIE, Item, Job, Project
from suggestions.management.commands.seed_demo import DEMO_SLUG
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
ITEMS = "\n".join(
    json.dumps({"id": f"q{i}", "prompt": prompt,
                "responses": [{"text": a, "model": "gpt-4o"}, {"text": b, "model": "llama-3-70b"}],
                "gold": 0, "metadata": {"topic": "science", "expert_justification": "The first is right."}})
    for i, (prompt, a, b) in enumerate([
        ("Why does ice float on water?", "Ice is less dense than liquid water.", "Because it is cold."),
        ("Name a prime number between 20 and 30.", "23", "21"),
        ("What gas do plants take in?", "Carbon dioxide, for photosynthesis.", "Oxygen."),
    ])
) + "\n"  # fmt: skip
# Drop a file on the import form as a person would drag one in (import.js reads the drop).
_DROP = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, {type: "application/jsonl"}));
  const zone = document.getElementById("import-drop");
  zone.dispatchEvent(new DragEvent("dragover", {dataTransfer: transfer, bubbles: true, cancelable: true}));
  zone.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
}"""


def _demo() -> Project:
    """The demo as `make demo` seeds it, its annotators' label requests answered mostly as the expert's gold says:
    one answer in four goes the other way, and confidence varies by item, so the figures look like people's."""
    call_command("seed_demo", password=PASSWORD, stdout=io.StringIO())
    project = Project.objects.get(slug=DEMO_SLUG)
    criterion = project.criteria.get()
    for request in LabelRequest.objects.filter(project=project, status=LabelRequest.Status.OPEN).select_related(
        "item", "annotator"
    ):
        request.refresh_from_db()
        if request.status != LabelRequest.Status.OPEN:
            continue
        item: Item = request.item
        chosen = 0 if item.gold_position in (None, TIE) else int(item.gold_position)
        if (item.pk + request.annotator_id) % 4 == 0:
            chosen = 1 - chosen
        sure = (850, 50) if item.pk % 3 else (450, 250)  # a third of the items hesitant
        values = [
            {"response": r.position, "criterion": criterion.name,
             "mu": sure[0] if r.position == chosen else sure[1], "nu": sure[1] if r.position == chosen else sure[0]}
            for r in item.responses.all()
        ]  # fmt: skip
        annotation_save(project=project, item=item, annotator=request.annotator, save=SaveRequest(values=values))
    call_command("recompute", str(project.pk), stdout=io.StringIO())
    return project


def _page(browser, live_server, username: str, viewport: dict[str, int]):
    context = browser.new_context(viewport=viewport, reduced_motion="reduce")
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


def _save(page, name: str, element: str | None = None) -> Path:
    """The window as a person sees it (not the whole scroll height), or one element of it, written where the docs
    look for it."""
    IMG.mkdir(parents=True, exist_ok=True)
    path = IMG / f"{name}.png"
    target = page.locator(element) if element else page
    target.screenshot(path=str(path), animations="disabled", caret="hide")
    assert path.stat().st_size > 10_000, f"{path.name} looks empty"
    return path


def _annotator_item(page, live_server, project: Project) -> None:
    """The next item with the sliders set by preset keys (4: some support, 2: some opposition), not yet saved."""
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
    page.wait_for_selector("input.slider.mu")
    page.wait_for_load_state("load")  # annotate.js and ifs_input.js have their keys
    page.focus("input.slider.mu >> nth=0")
    page.keyboard.press("4")
    page.keyboard.press("2")
    page.wait_for_function("() => document.querySelector('input.slider.mu').value !== '0'")


def _sliders_in_view(page) -> None:
    """The first answer's sliders in the middle of the window, under its text (a phone stacks the cards)."""
    page.evaluate("() => window.scrollTo(0, 0)")
    first = page.locator("fieldset.ifs >> nth=0")
    first.evaluate("e => e.scrollIntoView({block: 'center'})")


def test_the_docs_pictures_come_from_the_real_pages(browser, live_server):
    project = _demo()

    for name, viewport in (("annotator-desktop", DESKTOP), ("annotator-phone", PHONE)):
        context, page = _page(browser, live_server, "annotator1", viewport)
        _annotator_item(page, live_server, project)
        assert page.locator("input.slider.nu").count() >= 2
        if viewport == PHONE:
            _sliders_in_view(page)
        else:
            page.evaluate("() => window.scrollTo(0, 0)")
        _save(page, name)
        context.close()

    context, page = _page(browser, live_server, "lead", DESKTOP)
    page.goto(live_server.url + reverse("dashboard", kwargs={"project_id": project.pk}))
    page.wait_for_selector("nav.dash-tabs")
    assert project.name in page.inner_text("h1")
    _save(page, "dashboard")
    # The section index sticks to the top of the window; a picture of one card should not show it across the card.
    page.locator("#dash-index").evaluate("e => { e.style.position = 'static'; }")
    _save(page, "dashboard-blind-sample", "#suggestion-card")
    _save(page, "dashboard-hesitation", "#hesitation")
    _save(page, "dashboard-contracts", "#labeling-card")

    page.click("nav.dash-tabs >> text=Import")
    page.wait_for_selector("#import-form")
    page.wait_for_load_state("domcontentloaded")  # import.js (deferred) listens for the drop from here on
    page.evaluate(_DROP, ["items.jsonl", ITEMS])
    page.click("#import-submit")
    page.wait_for_url(lambda url: "/import/" in url and url.rstrip("/").split("/")[-1].isdigit())
    job = Job.objects.filter(project=project, options__dry_run=True).get()
    import_items_job_run(job_id=job.pk)  # the worker's part (a no-op if a worker already took the job)
    page.wait_for_selector("#import-preview", timeout=30_000)  # the job page polls until the dry run is done
    assert "Why does ice float on water?" in page.inner_text("#import-preview")
    _save(page, "import")

    page.goto(live_server.url + reverse("export_page", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#export-form")
    page.fill("#export-form input[name=min_annotators]", "2")
    page.fill("#export-form input[name=min_agreement]", "0.6")
    _save(page, "export")

    page.goto(live_server.url + reverse("method_study", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#method-study-form")
    _save(page, "method-study")

    page.goto(live_server.url + reverse("conclusions", kwargs={"project_id": project.pk}))
    page.wait_for_selector("h1")
    _save(page, "conclusions")

    page.goto(live_server.url + reverse("webhooks_page", kwargs={"project_id": project.pk}))
    page.wait_for_selector("h1")
    _save(page, "webhooks")

    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)  # Swagger UI, from local files
    _save(page, "api-docs")

    page.goto(live_server.url + reverse("study_links", kwargs={"project_id": project.pk}))
    page.fill("#study-link-form input[name=name]", "Prolific pilot, 30 people")
    page.fill("#study-link-form input[name=items_per_participant]", "20")
    page.fill("#study-link-form input[name=completion_url]", "https://app.prolific.com/submissions/complete?cc={code}")
    page.click("#study-link-form button[type=submit]")
    page.wait_for_selector("#study-links >> text=Prolific pilot, 30 people")
    _save(page, "study-links")
    context.close()
