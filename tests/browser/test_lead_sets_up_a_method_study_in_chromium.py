"""In a real browser: a lead sets up a three-method crossover study with the form's defaults, and an annotator then
labels their first planned items, each page in its block's method."""

from __future__ import annotations

import pytest

from aggregation.designs.report import PLOTS
from annotation.models import Annotation, StudyCell
from projects.models import Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_sets_up_the_study_and_an_annotator_follows_the_plan(page, live_server, login, shot):
    project = ProjectFactory(name="Methods compared", likert_points=5)
    lead = UserFactory(username="lead-methods")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"rater{i}") for i in range(3)]
    for person in people:
        MembershipFactory(project=project, user=person, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(6, project=project, is_blind=False)

    login(page, "lead-methods")
    page.goto(f"{live_server.url}/projects/{project.pk}/method-study/")
    page.wait_for_selector("#method-study-form")
    assert page.locator("input[name=methods]:checked").count() == 3
    assert page.locator("input[name=annotator_ids]:checked").count() == 3
    shot(page, "setup-form")
    page.click("#method-study-form button[type=submit]")
    page.wait_for_selector("#method-study")
    assert "18 planned judgments" in page.locator("#method-study").inner_text()
    shot(page, "study-planned")
    project.refresh_from_db()
    assert project.mode == Project.Mode.CROSSOVER

    page.context.clear_cookies()
    login(page, "rater1")
    plan = list(StudyCell.objects.filter(annotator=people[1]).order_by("sequence"))
    page.goto(f"{live_server.url}/projects/{project.pk}/annotate/")
    # Blocks of two: the first block and the first item of the second.
    for cell in plan[:3]:
        page.wait_for_selector(f'[data-item="{cell.item_id}"]')
        banner = page.locator("#study-block").inner_text()
        assert {"ifs": "IFS sliders", "binary": "Binary choice", "likert": "Likert scale (5 points)"}[
            cell.method
        ] in banner
        if cell.method == "binary":
            page.locator("input[name=binary_choice]").first.check()
        elif cell.method == "likert":
            page.locator("input[name=likert_value]").first.check()
        else:
            assert page.locator("input[name=binary_choice], input[name=likert_value]").count() == 0
        shot(page, f"item-{cell.sequence}-{cell.method}")
        page.click("#save-button")
        page.wait_for_selector(f'[data-item="{cell.item_id}"]', state="detached")
    saved = {a.item_id: a.mode for a in Annotation.objects.filter(annotator=people[1])}
    assert saved == {cell.item_id: cell.method for cell in plan[:3]}

    page.context.clear_cookies()
    login(page, "lead-methods")
    page.goto(f"{live_server.url}/projects/{project.pk}/method-study/report/")
    page.wait_for_selector("#per-method")
    rows = page.locator("#per-method tbody tr")
    assert rows.count() == 3
    assert "3 of 18 planned judgments saved" in page.locator("#method-study-report").inner_text()
    assert page.locator("#plots svg").count() == len(PLOTS)
    assert "repeat rate is 0" in page.locator("#consistency-empty").inner_text()
    shot(page, "report")
