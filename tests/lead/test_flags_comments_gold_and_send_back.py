"""Item notes and the lead's item actions, through the pages: who may act, what changes, and what errors say."""

from __future__ import annotations

import pytest
from django.urls import reverse

from aggregation.models import ProjectAggregate
from aggregation.services import project_agreement_recompute
from annotation.models import Assignment, ItemNote
from annotation.queue.services import assignment_claim_next
from projects.models import TIE, Project
from tests.conftest import _logged_in
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory
from tests.suggestions.helpers import label

pytestmark = pytest.mark.django_db


def _url(name, project, **kwargs):
    return reverse(name, kwargs={"project_id": project.pk, **kwargs})


def _served(project, annotator):
    assignment = assignment_claim_next(project=project, annotator=annotator)
    assert assignment is not None
    return assignment.item


def test_annotator_flags_a_served_item_and_the_lead_resolves_it(project, annotator, annotator_client, lead_client):
    item = _served(project, annotator)
    answer = annotator_client.post(
        _url("item_flag", project, item_id=item.pk), {"text": "Both answers are cut off."}, HTTP_HX_REQUEST="true"
    )
    assert answer.status_code == 200
    assert "Sent: the lead sees your flag" in answer.content.decode()
    flag = ItemNote.objects.get(item=item)
    assert (flag.kind, flag.author, flag.text, flag.resolved_at) == (
        "flag",
        annotator,
        "Both answers are cut off.",
        None,
    )

    dashboard = lead_client.get(_url("dashboard", project)).content.decode()
    assert "Both answers are cut off." in dashboard
    assert "1 open" in dashboard
    review = lead_client.get(_url("item_review", project, item_id=item.pk)).content.decode()
    assert "Both answers are cut off." in review

    lead_client.post(_url("flag_resolve", project, note_id=flag.pk), {"next": _url("dashboard", project)})
    flag.refresh_from_db()
    assert flag.resolved_at is not None
    assert "No open flags" in lead_client.get(_url("dashboard", project)).content.decode()
    again = lead_client.post(_url("flag_resolve", project, note_id=flag.pk), follow=True).content.decode()
    assert "already resolved" in again


def test_annotators_flag_only_items_they_were_served(project, annotator_client, outsider_client):
    item = project.items.first()  # never served to anyone
    answer = annotator_client.post(_url("item_flag", project, item_id=item.pk), {"text": "x"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 400
    assert "only items you were given" in answer.content.decode()
    assert outsider_client.post(_url("item_flag", project, item_id=item.pk), {"text": "x"}).status_code == 404
    assert not ItemNote.objects.exists()


def test_an_empty_flag_is_refused(project, annotator, annotator_client):
    item = _served(project, annotator)
    answer = annotator_client.post(_url("item_flag", project, item_id=item.pk), {"text": "  "}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 400
    assert "Write what the lead should know" in answer.content.decode()
    assert not ItemNote.objects.exists()


def test_only_leads_comment_set_gold_send_back_and_resolve(project, annotator, annotator_client, outsider_client):
    item = _served(project, annotator)
    flag = ItemNote.objects.create(project=project, item=item, author=annotator, kind="flag", text="odd")
    for client in (annotator_client, outsider_client):
        assert client.post(_url("item_comment", project, item_id=item.pk), {"text": "hi"}).status_code == 404
        assert client.post(_url("item_gold", project, item_id=item.pk), {"gold": "0"}).status_code == 404
        assert client.post(_url("item_send_back", project, item_id=item.pk), {"more": "1"}).status_code == 404
        assert client.post(_url("flag_resolve", project, note_id=flag.pk)).status_code == 404
    item.refresh_from_db()
    flag.refresh_from_db()
    assert (item.gold_position, item.extra_labels, flag.resolved_at) == (None, 0, None)
    assert ItemNote.objects.count() == 1


def test_lead_comment_is_kept_on_the_item(project, lead_client):
    item = project.items.first()
    lead_client.post(_url("item_comment", project, item_id=item.pk), {"text": "Check the second answer's maths."})
    note = ItemNote.objects.get(item=item)
    assert (note.kind, note.text) == ("comment", "Check the second answer's maths.")


def test_gold_set_and_corrected_marks_figures_stale(project, lead_client):
    item = project.items.first()
    version = project.settings_version
    lead_client.post(_url("item_gold", project, item_id=item.pk), {"gold": "1"})
    lead_client.post(_url("item_gold", project, item_id=item.pk), {"gold": "tie"})
    item.refresh_from_db()
    project.refresh_from_db()
    assert item.gold_position == TIE
    assert project.settings_version == version + 2  # every figure waits for the recompute
    notes = list(ItemNote.objects.filter(item=item).values_list("text", flat=True))
    assert notes == ["Gold set: none → Response 2.", "Gold corrected: Response 2 → tie."]

    page = lead_client.post(_url("item_gold", project, item_id=item.pk), {"gold": "7"}, follow=True).content.decode()
    assert "Gold must be one of the item" in page
    item.refresh_from_db()
    assert item.gold_position == TIE


def test_send_back_serves_the_item_again_to_someone_new():
    project = ProjectFactory(overlap=1)
    lead, first, second = (UserFactory(username=n) for n in ("sb-lead", "sb-first", "sb-second"))
    MembershipFactory(project=project, user=lead, role="lead")
    MembershipFactory(project=project, user=first)
    MembershipFactory(project=project, user=second)
    ItemFactory(project=project)
    item = _served(project, first)
    label(project, item, first, 0)
    Assignment.objects.filter(item=item, annotator=first).update(status=Assignment.Status.DONE)
    assert assignment_claim_next(project=project, annotator=second) is None  # the item has all its labels

    page = _logged_in(lead).post(
        _url("item_send_back", project, item_id=item.pk), {"more": "1", "reason": "unsure"}, follow=True
    )
    assert "Sent back" in page.content.decode()
    item.refresh_from_db()
    assert item.extra_labels == 1
    assert ItemNote.objects.get(item=item).text == "Sent back for 1 more label: unsure"
    assert assignment_claim_next(project=project, annotator=first) is None  # never twice to the same person
    served = assignment_claim_next(project=project, annotator=second)
    assert served is not None
    assert served.item == item
    home = _logged_in(second).get(reverse("home")).content.decode()
    assert "still open for you" in home


def test_send_back_is_refused_while_labelling_is_paused(project, lead_client):
    Project.objects.filter(pk=project.pk).update(phase=Project.Phase.HANDED_OFF)
    item = project.items.first()
    page = lead_client.post(_url("item_send_back", project, item_id=item.pk), {"more": "1"}, follow=True)
    assert "nothing is served until labelling resumes" in page.content.decode()
    item.refresh_from_db()
    assert item.extra_labels == 0


def test_progress_figures_count_the_labels_a_sent_back_item_still_wants():
    project = ProjectFactory(overlap=1)
    lead, first = UserFactory(username="pf-lead"), UserFactory(username="pf-first")
    MembershipFactory(project=project, user=lead, role="lead")
    MembershipFactory(project=project, user=first)
    items = [ItemFactory(project=project) for _ in range(2)]
    for item in items:
        label(project, item, first, 0)
    project_agreement_recompute(project_id=project.pk)
    progress = ProjectAggregate.objects.get(project=project).progress
    assert (progress["items_done"], progress["labels_needed"], progress["labels_done"]) == (2, 2, 2)

    _logged_in(lead).post(_url("item_send_back", project, item_id=items[0].pk), {"more": "2"})
    project_agreement_recompute(project_id=project.pk)
    progress = ProjectAggregate.objects.get(project=project).progress
    assert (progress["items_done"], progress["labels_needed"], progress["labels_done"]) == (1, 4, 2)
