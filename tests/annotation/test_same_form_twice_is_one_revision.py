"""A double click or a retry (same client token) makes one revision; every other save appends one."""

from __future__ import annotations

from annotation.models import Annotation, AnnotationRevision
from tests.annotation.conftest import ifs_form, item_url


def test_same_token_twice_is_one_revision(project, annotator_client, annotator, claimed_item):
    data = ifs_form(claimed_item, {0: (500, 100), 1: (200, 300)})
    first = annotator_client.post(item_url(project, claimed_item), data)
    second = annotator_client.post(item_url(project, claimed_item), data)
    assert first.status_code == second.status_code == 302
    annotation = Annotation.objects.get(item=claimed_item, annotator=annotator)
    assert annotation.revisions.count() == 1
    assert annotation.revision_count == 1
    claimed_item.refresh_from_db()
    assert claimed_item.annotation_count == 1


def test_every_new_save_appends_a_revision_with_the_full_payload(project, annotator_client, annotator, claimed_item):
    annotator_client.post(item_url(project, claimed_item), ifs_form(claimed_item, {0: (500, 100)}))
    annotator_client.post(item_url(project, claimed_item), ifs_form(claimed_item, {0: (900, 0)}))
    revisions = list(AnnotationRevision.objects.filter(annotation__item=claimed_item).order_by("number"))
    assert [r.number for r in revisions] == [1, 2]
    first_values = {(v["response"], v["mu"], v["nu"]) for v in revisions[0].payload["values"]}
    second_values = {(v["response"], v["mu"], v["nu"]) for v in revisions[1].payload["values"]}
    assert (0, 500, 100) in first_values
    assert (0, 900, 0) in second_values
    claimed_item.refresh_from_db()
    assert claimed_item.annotation_count == 1, "editing does not count as another annotator"
