"""A crowd participant in a real browser: arrives by a Prolific-style link, labels one item with the sliders
(mouse and keyboard) and reaches the completion code."""

from __future__ import annotations

import pytest

from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from annotation.models import Annotation
from projects.models import Membership, Project
from tests.annotation.study_helpers import enter_url
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_participant_labels_one_item_and_gets_the_code(page, live_server, shot):
    project = ProjectFactory(name="Crowd study", suggestion_display=Project.SuggestionDisplay.BEFORE_LABEL)
    lead = UserFactory(username="lead-browser")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    ItemFactory.create_batch(2, project=project, is_blind=False)
    link = study_link_create(
        project=project, created_by=lead, name="Prolific pilot", completion_code="C1A2B3", items_per_participant=1
    )
    criterion = project.criteria.get()
    mu0, nu1 = f"#mu-0-{criterion.pk}", f"#nu-1-{criterion.pk}"

    page.goto(live_server.url + enter_url(link, "60a1b2c3d4e5f60718293a4b"))
    page.wait_for_selector("#annotate-form")
    shot(page, "arrived-on-the-annotation-page")

    box = page.locator(mu0).bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.8, box["y"] + box["height"] / 2)
    page.focus(nu1)
    for _ in range(5):
        page.keyboard.press("Shift+ArrowRight")
    mu_value = int(page.eval_on_selector(mu0, "e => e.value"))
    nu_value = int(page.eval_on_selector(nu1, "e => e.value"))
    assert mu_value >= 600
    assert nu_value == 500
    shot(page, "sliders-set")

    page.keyboard.press("s")
    page.wait_for_selector("#completion-code")
    assert page.locator("#completion-code").inner_text() == "C1A2B3"
    assert page.url.endswith(f"/study/{link.token}/end/")
    shot(page, "completion-code")

    participant = Participant.objects.get()
    assert participant.external_id == "60a1b2c3d4e5f60718293a4b"
    assert participant.status == Participant.Status.COMPLETED
    assert participant.code_shown_at is not None
    annotation = Annotation.objects.get(annotator=participant.user)
    value = annotation.values.get(response__position=0)
    assert value.mu == mu_value
    assert annotation.values.get(response__position=1).nu == nu_value
