"""A person holding a calibration, certification or audit request for an item never sees the model's answer for it
(suggestion, Accept, pre-fill, after-label resolution), before or after saving, in any display mode; their save
answers the request and is blind. Requests come through the ordinary queue, mixed among ordinary items, and audit
requests are still served after a handoff.

The walk is the blind-leak test's walk (tests/annotation/test_blind_suggestions_never_reach_the_annotator.py) on
items that are *not* in the blind sample, so only the request can be what hides the marker; a colleague without a
request walks the same item and must see it, so the search itself is proven to work.
"""

from __future__ import annotations

import pytest

from annotation.models import Annotation, Assignment, LabelRequest, SuggestionExposure
from annotation.queue.services import assignment_claim_next
from projects.models import Item, Project
from tests.annotation.test_blind_suggestions_never_reach_the_annotator import PANEL_WORDS, _walk
from tests.factories import ItemFactory, SuggestionFactory


@pytest.fixture
def shown_items(project):
    items = list(Item.objects.filter(project=project).order_by("pk"))
    Item.objects.filter(project=project).update(is_blind=False)
    markers = {}
    for item in items:
        marker = f"MARK{item.pk:05d}R"
        SuggestionFactory(
            item=item,
            preferred_position=1,
            rationale=f"Because {marker}-rationale",
            model_name=f"{marker}-model",
            values=[(111, 777), (777, 111)],
        )
        markers[item.pk] = marker
    return [Item.objects.get(pk=i.pk) for i in items], markers


def _request(project, item, user, kind="certification", probability=0.25) -> LabelRequest:
    return LabelRequest.objects.create(
        project=project,
        item=item,
        annotator=user,
        kind=kind,
        inclusion_probability=None if kind == "verification" else probability,
        machine_preferred=1,
    )


@pytest.mark.parametrize("kind", ["calibration", "certification", "audit"])
@pytest.mark.parametrize("display", ["blind_sample", "before_label", "after_label"])
def test_a_request_withholds_every_machine_answer_from_its_holder(
    project, annotator, annotator_client, shown_items, kind: str, display: str
) -> None:
    items, markers = shown_items
    project.suggestion_display = display
    project.save(update_fields=["suggestion_display"])
    item = items[0]
    request = _request(project, item, annotator, kind=kind)
    bodies, accept = _walk(annotator_client, project, item)
    assert accept.status_code == 404, "Accept on a requested item is refused"
    for what, status, text in bodies:
        assert status < 500, what
        assert markers[item.pk] not in text, f"marker leaked to the request's holder in {what}"
        if f'data-item="{item.pk}"' in text:
            for word in PANEL_WORDS:
                assert word not in text, f"suggestion panel on a requested item in {what}"
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    assert not annotation.suggestion_shown
    assert not annotation.accepted_suggestion
    assert not SuggestionExposure.objects.filter(item=item, annotator=annotator).exists()
    request.refresh_from_db()
    assert request.status == LabelRequest.Status.ANSWERED
    assert request.answered_at is not None
    assert request.final_preferred is not None


def test_a_colleague_without_the_request_sees_the_marker(project, annotator, annotator2, shown_items) -> None:
    from tests.conftest import _logged_in

    items, markers = shown_items
    item = items[0]
    _request(project, item, annotator)
    bodies, accept = _walk(_logged_in(annotator2), project, item)
    assert accept.status_code == 200
    assert "page" in [what for what, _, text in bodies if markers[item.pk] in text]


def test_a_verification_request_does_not_hide_the_answer(project, annotator, annotator_client, shown_items) -> None:
    items, markers = shown_items
    _request(project, items[0], annotator, kind="verification")
    bodies, _ = _walk(annotator_client, project, items[0])
    assert "page" in [what for what, _, text in bodies if markers[items[0].pk] in text]


def test_requests_are_served_when_nothing_else_is_left_and_after_a_handoff(project, annotator, shown_items) -> None:
    items, _ = shown_items
    target = items[-1]
    # Every item already has all its labels from others, so only the request can bring the target back.
    Item.objects.filter(project=project).update(annotation_count=project.overlap)
    _request(project, target, annotator, kind="audit")
    project.phase = Project.Phase.HANDED_OFF
    project.save(update_fields=["phase"])
    served = assignment_claim_next(project=project, annotator=annotator)
    assert served is not None
    assert served.item_id == target.pk
    assert served.status == Assignment.Status.CLAIMED
    # A reload gives the same request item, not a second one.
    assert assignment_claim_next(project=project, annotator=annotator).pk == served.pk


def test_requests_come_mixed_among_ordinary_items(project, annotator, annotator_client, shown_items) -> None:
    """Some saves are followed by a request item before the ordinary queue is empty (the seeded turn)."""
    from tests.annotation.conftest import ifs_form, item_url

    items, _ = shown_items
    ItemFactory.create_batch(40, project=project, is_blind=False)
    requested = items[:3]
    for item in requested:
        _request(project, item, annotator, kind="calibration")
    served_order = []
    for _ in range(30):
        assignment = assignment_claim_next(project=project, annotator=annotator)
        if assignment is None:
            break
        item = Item.objects.get(pk=assignment.item_id)
        served_order.append(item.pk)
        annotator_client.post(item_url(project, item), ifs_form(item))
    positions = [served_order.index(item.pk) for item in requested if item.pk in served_order]
    assert positions, "requests were served"
    assert min(positions) < len(served_order) - 1, "a request came before the ordinary items ran out"
    assert LabelRequest.objects.filter(status=LabelRequest.Status.ANSWERED).count() == len(positions)


def test_blind_verification_withholds_the_answer_and_the_setting_freezes_once_answered(
    project, annotator, annotator_client, shown_items
) -> None:
    from django.core.exceptions import ValidationError

    from projects.services import project_update

    items, markers = shown_items
    project_update(project=project, changes={"verify_visibility": "blind"})
    project.refresh_from_db()
    item = items[1]
    request = _request(project, item, annotator, kind="verification")
    bodies, accept = _walk(annotator_client, project, item)
    assert accept.status_code == 404
    for what, _status, text in bodies:
        assert markers[item.pk] not in text, f"blind verification leaked in {what}"
    annotation = Annotation.objects.get(item=item, annotator=annotator)
    assert not annotation.suggestion_shown, "a blind verification answer is a blind label"
    request.refresh_from_db()
    assert request.status == LabelRequest.Status.ANSWERED
    with pytest.raises(ValidationError, match="Verification requests have been answered"):
        project_update(project=project, changes={"verify_visibility": "shown"})


def test_a_verification_request_fills_in_the_answer_and_records_keep(project, annotator, annotator_client, shown_items):
    from tests.annotation.conftest import ifs_form, item_url

    items, _ = shown_items
    item = items[2]
    request = _request(project, item, annotator, kind="verification")
    page = annotator_client.get(item_url(project, item)).content.decode()
    assert 'id="verification-notice"' in page
    assert 'value="777"' in page, "the model's (μ, ν) are on the sliders"
    # Saving the filled-in answer as it is keeps it.
    annotator_client.post(item_url(project, item), ifs_form(item, {0: (111, 777), 1: (777, 111)}))
    request.refresh_from_db()
    assert request.status == LabelRequest.Status.ANSWERED
    assert request.final_preferred == request.machine_preferred == 1
    again = annotator_client.get(item_url(project, item)).content.decode()
    assert 'id="verification-notice"' not in again, "only the first view of an unanswered request is filled in"
