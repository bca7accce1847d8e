"""The annotation page retries a save that got no answer it can trust, with the same client token: after a 503 (the
database briefly away) and after a connection that dropped once the server had stored the save. The annotator is
told the save is not confirmed yet, never that it failed; the retry stores the label exactly once and moves on."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotation, AnnotationRevision
from projects.models import Membership
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _project():
    project = ProjectFactory(name="Retry", overlap=1)
    annotator = UserFactory(username="ann-retry")
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    items = [ItemFactory(project=project, is_blind=False) for _ in range(2)]
    return project, annotator, items


@pytest.mark.parametrize("failure", ["503", "dropped-after-storing"])
def test_an_unconfirmed_save_is_sent_again_and_stored_once(page, live_server, login, shot, failure):
    project, annotator, _ = _project()
    login(page, annotator.username)
    page.goto(live_server.url + reverse("annotate_next", kwargs={"project_id": project.pk}))
    page.wait_for_selector("#annotate-frame[data-ready='1']")
    first = int(page.get_attribute("#annotate-frame", "data-item"))
    posts: list[str] = []

    def intercept(route):
        request = route.request
        if request.method != "POST":
            route.continue_()
            return
        posts.append(request.post_data or "")
        if len(posts) > 1:
            route.continue_()
        elif failure == "503":
            route.fulfill(status=503, headers={"Retry-After": "1"}, body="The database is briefly unavailable.")
        else:
            route.fetch()  # the server stores the save; its answer never reaches the page
            route.abort("connectionreset")

    page.route(f"**/projects/{project.pk}/items/*/annotate/", intercept)
    page.keyboard.press("5")
    page.keyboard.press("2")
    page.keyboard.press("s")
    page.wait_for_selector("#save-status:not([hidden])")
    status = page.inner_text("#save-status")
    shot(page, "not-confirmed-yet")
    assert "not confirmed yet" in status
    assert "failed" not in status.lower()
    page.wait_for_selector(".notice:has-text('Saved.')", timeout=20_000)
    shot(page, "saved-after-retry")

    assert len(posts) == 2
    token = [part for part in posts[0].split("&") if part.startswith("client_token=")]
    assert token, "the save carries a client token"
    assert token[0] in posts[1], "the retry carries the same client token"
    annotation = Annotation.objects.get(item_id=first, annotator=annotator)
    assert AnnotationRevision.objects.filter(annotation=annotation).count() == 1
    assert int(page.get_attribute("#annotate-frame", "data-item")) != first
