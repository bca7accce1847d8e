"""The page's save-and-next runs the save and the next claim in one transaction: when the save is refused after
its checks have begun (the claim expired and the item filled up meanwhile), nothing is written and no next item is
claimed; the annotator is told why."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from annotation.models import Annotation, AnnotationRevision, Assignment
from projects.models import Item
from tests.annotation.conftest import ifs_form, item_url
from tests.factories import ItemFactory


@pytest.mark.django_db(transaction=True)
def test_a_refused_save_claims_no_next_item(annotator_client, project, annotator, claimed_item):
    ItemFactory.create_batch(3, project=project)  # plenty left to claim next
    Assignment.objects.filter(annotator=annotator).update(expires_at=timezone.now() - timedelta(minutes=1))
    Item.objects.filter(pk=claimed_item.pk).update(annotation_count=F("annotation_count") + project.overlap)

    response = annotator_client.post(
        item_url(project, claimed_item), ifs_form(claimed_item, stage="label"), HTTP_HX_REQUEST="true"
    )

    assert "now has all the labels it needs" in response.content.decode()
    assert not Annotation.objects.filter(annotator=annotator).exists()
    assert not AnnotationRevision.objects.exists()
    assert list(Assignment.objects.filter(annotator=annotator).values_list("item_id", flat=True)) == [claimed_item.pk]


@pytest.mark.django_db(transaction=True)
def test_an_accepted_save_claims_the_next_item_in_the_same_request(annotator_client, project, annotator, claimed_item):
    ItemFactory.create_batch(3, project=project)
    response = annotator_client.post(
        item_url(project, claimed_item), ifs_form(claimed_item, stage="label"), HTTP_HX_REQUEST="true"
    )
    assert "Saved." in response.content.decode()
    assert Annotation.objects.filter(annotator=annotator, item=claimed_item).count() == 1
    live = Assignment.objects.filter(annotator=annotator, status=Assignment.Status.CLAIMED)
    assert live.count() == 1
    assert live.get().item_id != claimed_item.pk
    assert f'data-item="{live.get().item_id}"' in response.content.decode()
