"""The done list (D on the annotation page) lists the person's own labelled and skipped items, latest first, each a
link that reopens it; nobody else's, and outsiders get 404."""

from __future__ import annotations

from django.urls import reverse

from annotation.queue.services import assignment_claim_next
from tests.annotation.conftest import ifs_form, item_url
from tests.conftest import _logged_in


def test_the_list_holds_my_done_items_latest_first_and_each_opens(project, annotator, annotator2, annotator_client):
    done = []
    for _ in range(2):
        item = assignment_claim_next(project=project, annotator=annotator).item
        assert annotator_client.post(item_url(project, item), ifs_form(item)).status_code == 302
        done.append(item)
    theirs = assignment_claim_next(project=project, annotator=annotator2).item
    _logged_in(annotator2).post(item_url(project, theirs), ifs_form(theirs))

    url = reverse("annotate_done", kwargs={"project_id": project.pk})
    html = annotator_client.get(url, HTTP_HX_REQUEST="true").content.decode()

    assert "Your done items (2)" in html
    assert html.index(done[1].external_id) < html.index(done[0].external_id), "latest first"
    for item in done:
        assert f'href="{item_url(project, item)}"' in html
    if theirs.pk not in {item.pk for item in done}:
        assert f'href="{item_url(project, theirs)}"' not in html
    page = annotator_client.get(url)
    assert page.status_code == 200
    assert "<h1>" in page.content.decode()
    reopened = annotator_client.get(item_url(project, done[0]))
    assert "Revisiting a done item" in reopened.content.decode()


def test_outsiders_get_404(project, outsider_client):
    assert outsider_client.get(reverse("annotate_done", kwargs={"project_id": project.pk})).status_code == 404
