"""A lead runs a project from the browser alone, from an empty database with one lead account: creates a project with
two criteria (a row added, the guidelines previewed), invites two annotators by e-mail (one sets a password through
the link and labels the first item), imports items through the page, creates a study link with two attention items,
watches the dashboard, draws certification requests from its card, exports, and archives. No API call, admin page or
management command; the job runner's part is called in-process as the import and export tests do.

Every new page passes axe with no serious or critical violation and fits a 390 px phone. The screenshots at
1440 × 900 are the ones in docs/guides/lead.md (docs/img/lead-*.png); clicks are counted for the guide.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aggregation.exports.tasks import export_job_run
from annotation.crowd.models import StudyLink
from annotation.models import Annotation, LabelRequest
from projects.imports.tasks import import_items_job_run
from projects.models import Item, Job, Project
from tests.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
AXE = Path(__file__).resolve().parents[1] / "browser" / "assets" / "axe.min.js"
BLOCKING = {"serious", "critical"}
ITEMS = (
    "\n".join(
        json.dumps(
            {
                "id": f"q{i}",
                "prompt": f"Why does ice float? (variant {i})",
                "responses": [
                    {"text": "Ice is less dense than liquid water.", "model": "gpt-4o"},
                    {"text": "Because it is cold.", "model": "llama-3"},
                ],
                "suggestion": {"preferred": 0, "rationale": "A names density.", "model": "gpt-4o-mini"},
                **({"gold": 0} if i < 2 else {}),
            }
        )
        for i in range(6)
    )
    + "\n"
)
_DROP = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, {type: "application/jsonl"}));
  const zone = document.getElementById("import-drop");
  zone.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
}"""


# The elements sticking out past the window's right edge, innermost first, to name the culprit in the failure.
_OFFENDERS = """() => Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.dash-scroll, pre, table'))
  .filter(e => !Array.from(e.children).some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
  .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))
  """


class Flow:
    """The page with a click counter, the docs screenshots and the axe and phone checks of each new page."""

    def __init__(self, page, base: str) -> None:
        self.page, self.base, self.clicks, self.problems = page, base, 0, {}
        self.shots: list[str] = []

    def click(self, selector: str) -> None:
        self.clicks += 1
        self.page.click(selector)

    def shot(self, name: str) -> None:
        path = DOCS_IMG / f"lead-{len(self.shots) + 1:02d}-{name}.png"
        self.page.screenshot(path=str(path))
        self.shots.append(path.name)

    def check(self, name: str) -> None:
        page = self.page
        if not page.evaluate("typeof axe !== 'undefined'"):
            page.add_script_tag(path=str(AXE))
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        found = [
            f"{v['impact']} {v['id']}: {v['help']} {[n['target'] for n in v['nodes'][:3]]}"
            for v in result["violations"]
            if v["impact"] in BLOCKING
        ]
        page.set_viewport_size({"width": 390, "height": 844})
        widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        if widths[0] > widths[1]:
            found.append(f"{widths[0]} px wide at 390 px: {page.evaluate(_OFFENDERS)}")
        page.set_viewport_size({"width": 1440, "height": 900})
        if found:
            self.problems[name] = found


def test_a_lead_runs_a_project_from_the_browser(live_server, browser):
    UserFactory(username="lead", is_staff=True)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1440, "height": 900}, bypass_csp=True)
    context.set_default_timeout(10_000)
    flow = Flow(context.new_page(), live_server.url)
    page = flow.page
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", "lead")
    page.fill("input[name=password]", PASSWORD)
    flow.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")

    # 1. Create: the empty home page leads to the form; a second criterion row; the guidelines previewed.
    flow.shot("empty-home")
    flow.click("#empty-new-project")
    page.fill("#id_name", "Long-form QA")
    page.fill("#id_overlap", "2")
    page.fill("#id_criteria-0-name", "helpful")
    page.fill("#id_criteria-0-weight", "0.6")
    flow.click("#add-criterion")
    page.fill("#id_criteria-1-name", "harmless")
    page.fill("#id_criteria-1-weight", "0.4")
    page.fill("#id_criteria-1-description", "Nothing unsafe or rude.")
    page.fill("#id_guidelines", "Prefer the **correct** answer; a short one is fine.")
    flow.click("#guidelines-preview-button")
    page.wait_for_selector("#guidelines-preview strong")
    page.locator("#criteria").scroll_into_view_if_needed()
    flow.shot("new-project")
    flow.check("new project")
    flow.click("#project-create")
    page.wait_for_url("**/people/")
    project = Project.objects.get()
    assert list(project.criteria.values_list("name", "weight")) == [("helpful", 0.6), ("harmless", 0.4)]

    # 2. People: two annotators invited by e-mail; no mail is configured, so the page shows the link to pass on.
    links = []
    for address in ("ada@example.org", "bo@example.org"):
        page.fill("#id_address", address)
        flow.click("#invite-submit")
        page.wait_for_selector(f"#invitation:has-text('{address.split('@')[0]}')")
        links.append(page.input_value("#invitation-link"))
    flow.shot("people")
    flow.check("people")
    assert project.memberships.filter(role="annotator").count() == 2

    # 3. Import through the page: a dry run, then the import.
    flow.click("nav.dash-tabs >> text=Import")
    page.wait_for_selector("#import-form")
    page.evaluate(_DROP, ["items.jsonl", ITEMS])
    flow.click("#import-submit")
    page.wait_for_url(lambda url: url.rstrip("/").split("/")[-1].isdigit())
    import_items_job_run(job_id=Job.objects.get(project=project).pk)
    page.wait_for_selector("#import-confirm", timeout=15_000)
    dry_run_url = page.url
    flow.click("#import-confirm button")
    page.wait_for_url(lambda url: url != dry_run_url and url.rstrip("/").split("/")[-1].isdigit())
    import_items_job_run(job_id=Job.objects.filter(project=project).latest("pk").pk)
    page.wait_for_selector("#import-counts", timeout=15_000)
    flow.shot("import-report")
    assert Item.objects.filter(project=project).count() == 6

    # 4. A study link with the two gold items as attention checks.
    flow.click("nav.dash-tabs >> text=Study links")
    page.wait_for_selector("#study-link-form")
    page.fill("#study-link-form input[name=name]", "Prolific wave 1")
    page.fill("#attention-filter", "q1")
    assert page.locator("#attention-list li:visible").count() == 1
    flow.click("#attention-list input[value=q1]")
    page.fill("#attention-filter", "")
    flow.click("#attention-list input[value=q0]")
    page.fill("#study-link-form input[name=attention_every]", "2")
    flow.click("#study-link-form button[type=submit]")
    page.wait_for_selector("#study-links td")
    link = StudyLink.objects.get(project=project)
    assert sorted(link.attention_item_ids) == ["q0", "q1"]
    flow.click("#study-links a:has-text('Prolific wave 1')")
    page.wait_for_selector("#link-settings")
    flow.shot("study-link")
    flow.check("study link")

    # 5. An invited annotator sets a password through the link and labels the first item.
    clicks_before_annotator = flow.clicks
    other = browser.new_context(viewport={"width": 1440, "height": 900})
    annotator = other.new_page()
    annotator.goto(links[0])
    annotator.fill("#id_new_password1", "a long fresh pass 42")
    annotator.fill("#id_new_password2", "a long fresh pass 42")
    annotator.click("button[type=submit], input[type=submit]")
    annotator.wait_for_url(live_server.url + "/")
    annotator.click("text=Start annotating")
    annotator.wait_for_selector("#annotate-form")
    annotator_actions = 2 + _label_first_item(annotator)
    for _ in range(50):
        if Annotation.objects.filter(project=project).exists():
            break
        annotator.wait_for_timeout(100)
    assert Annotation.objects.filter(project=project).count() == 1
    other.close()

    # 6. The dashboard, the people's progress, the export.
    flow.click("nav.dash-tabs >> text=Dashboard")
    page.wait_for_url("**/dashboard/")
    flow.shot("dashboard")
    flow.click("#label-requests-link")
    page.fill("#id_size", "2")
    page.fill("#id_labels_per_item", "1")
    flow.click("#request-submit")
    page.wait_for_selector("#request-result")
    assert LabelRequest.objects.filter(project=project, kind="certification").count() == 2
    flow.shot("label-requests")
    flow.check("label requests")
    flow.click("nav.dash-tabs >> text=Dashboard")
    page.wait_for_url("**/dashboard/")
    flow.click("nav.dash-tabs >> text=People")
    page.wait_for_selector("#invite-form")
    assert "1" in page.inner_text("#members")
    flow.click("nav.dash-tabs >> text=Export")
    page.wait_for_selector("#export-form")
    page.select_option("#id_format", "annotations")
    flow.click("#export-form button[type=submit]")
    job = Job.objects.get(project=project, kind=Job.Kind.EXPORT)
    export_job_run(job_id=job.pk)
    page.wait_for_selector("#export-download", timeout=15_000)
    flow.shot("export")
    with page.expect_download() as download:
        flow.click("#export-download")
    assert len(Path(download.value.path()).read_text().splitlines()) == 1

    # 7. Archive, asked first.
    flow.click("nav.dash-tabs >> text=Settings")
    flow.click("#archive-link")
    page.wait_for_selector("#archive-confirm")
    flow.check("archive")
    flow.shot("archive")
    flow.click("#archive-confirm")
    page.wait_for_url("**/dashboard/")
    project.refresh_from_db()
    assert project.phase == Project.Phase.CLOSED
    context.close()

    (DOCS_IMG.parent / "guides" / "lead-flow-clicks.json").write_text(
        json.dumps(
            {
                "lead_clicks_until_the_annotator_starts": clicks_before_annotator,
                "annotator_actions_to_the_first_label": annotator_actions,
                "lead_clicks_in_all": flow.clicks,
                "screenshots": flow.shots,
            },
            indent=2,
        )
        + "\n"
    )
    assert flow.problems == {}


def _label_first_item(page) -> int:
    """Sets every slider (response 1 supported, response 2 opposed, on each criterion) and saves; returns the number of
    actions: one per slider and the save."""
    targets = {"mu-0": "600", "nu-0": "100", "mu-1": "100", "nu-1": "600"}
    sliders = page.locator("input.slider")
    for index in range(sliders.count()):
        slider = sliders.nth(index)
        slider.fill(targets["-".join(slider.get_attribute("id").split("-")[:2])])
    page.click("#save-button")
    page.wait_for_function("() => !document.querySelector('#save-button') || document.readyState === 'complete'")
    return sliders.count() + 1
