"""A GET writes no claim: opening an item by its address shows it under the annotator's own row, or under an unsaved
one while the item has room; the save (or a skip) is what takes the slot. Only "next" claims, as documented."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Annotation, Assignment
from annotation.queue.services import assignment_claim_next
from projects.models import Item
from tests.annotation.conftest import ifs_form, item_url


def _shown_item(html: str) -> int:
    return int(html.split('data-item="')[1].split('"')[0])


def test_opening_an_item_writes_no_claim_and_its_save_takes_the_slot(project, annotator, annotator_client):
    item = project.items.order_by("pk").last()
    response = annotator_client.get(item_url(project, item))
    assert response.status_code == 200
    assert _shown_item(response.content.decode()) == item.pk
    assert not Assignment.objects.filter(annotator=annotator).exists()

    annotator_client.post(item_url(project, item), ifs_form(item))
    assert Annotation.objects.filter(item=item, annotator=annotator).count() == 1
    assert Assignment.objects.get(item=item, annotator=annotator).status == Assignment.Status.DONE


def test_opening_a_held_item_does_not_renew_its_claim(project, annotator, annotator_client):
    claim = assignment_claim_next(project=project, annotator=annotator)
    before = Assignment.objects.filter(annotator=annotator).values_list("pk", "status", "expires_at", "updated_at")
    held = list(before)
    annotator_client.get(item_url(project, claim.item))
    assert list(before.all()) == held


def test_an_item_opened_by_its_address_can_be_skipped(project, annotator, annotator_client):
    item = project.items.order_by("pk").last()
    annotator_client.get(item_url(project, item))
    skip = reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk})
    annotator_client.post(skip, {"skip_reason": "other", "skip_other": "Unreadable prompt"})
    skipped = Assignment.objects.get(item=item, annotator=annotator)
    assert (skipped.status, skipped.skip_reason) == (Assignment.Status.SKIPPED, "Unreadable prompt")


def test_a_refused_save_of_an_unclaimed_item_shows_the_form_again(project, annotator, annotator_client):
    item = project.items.order_by("pk").last()
    form = ifs_form(item, {0: (900, 900)})  # μ + ν above 100 %
    response = annotator_client.post(item_url(project, item), form)
    assert response.status_code == 422
    assert _shown_item(response.content.decode()) == item.pk
    assert not Assignment.objects.filter(annotator=annotator).exists()


def test_a_full_item_sends_the_annotator_to_the_next_one(project, annotator, annotator_client):
    full = project.items.order_by("pk").last()
    Item.objects.filter(pk=full.pk).update(annotation_count=project.overlap)
    html = annotator_client.get(item_url(project, full)).content.decode()
    assert "already has all the labels it needs" in html
    assert _shown_item(html) != full.pk
    # "Next" claims, as documented: the item shown is now held.
    assert Assignment.objects.get(annotator=annotator).item_id == _shown_item(html)
    assert not Assignment.objects.filter(item=full, annotator=annotator).exists()
