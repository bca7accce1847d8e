"""Binary (A, B, tie) and the k-point Likert scale on the same page frame, stored by position, never display order."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation import judgment
from annotation.models import Annotation
from annotation.queue.services import assignment_claim_item
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import TIE, Membership, Project
from tests.annotation.conftest import item_url
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, SuggestionFactory


def _project(mode, annotator, **settings):
    project = ProjectFactory(mode=mode, suggestion_display=Project.SuggestionDisplay.BEFORE_LABEL, **settings)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(8, project=project)
    return project


def test_binary_choice_is_stored_by_position(annotator, annotator_client):
    project = _project(Project.Mode.BINARY, annotator)
    item = project.items.first()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'name="binary_choice" value="-1"' in html
    assert "Which response is better?" in html
    annotator_client.post(item_url(project, item), {"binary_choice": "1", "client_token": "b1"})
    assert Annotation.objects.get(item=item).binary_choice == 1
    annotator_client.post(item_url(project, item), {"binary_choice": "-1", "client_token": "b2"})
    assert Annotation.objects.get(item=item).binary_choice == TIE


def test_binary_refuses_a_missing_or_unknown_choice(annotator, annotator_client):
    project = _project(Project.Mode.BINARY, annotator)
    item = project.items.first()
    assignment_claim_item(project=project, item=item, annotator=annotator)
    for bad in (None, 5, "A"):
        with pytest.raises(ValidationError) as refused:
            annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(binary_choice=bad))
        assert "binary_choice" in refused.value.message_dict
    response = annotator_client.post(item_url(project, item), {"client_token": "b3"})
    assert response.status_code == 422
    assert not Annotation.objects.exists()


def test_likert_maps_display_order_to_stored_positions(annotator, annotator_client):
    project = _project(Project.Mode.LIKERT, annotator, likert_points=5)
    for item in project.items.all():
        order = assignment_claim_item(project=project, item=item, annotator=annotator).response_order
        html = annotator_client.get(item_url(project, item)).content.decode()
        # Display point 1 ("left much better") must store the value meaning "left response strongly preferred".
        left = order[0]
        expected_stored = 1 if left == 0 else 5
        assert f'value="{expected_stored}" data-key="1"' in html
        annotator_client.post(
            item_url(project, item), {"likert_value": str(expected_stored), "client_token": str(item.pk)}
        )
        stored = Annotation.objects.get(item=item, annotator=annotator).likert_value
        assert judgment.preferred_from_likert(stored, 5) == left


def test_likert_range_and_two_responses_are_enforced(annotator):
    project = _project(Project.Mode.LIKERT, annotator, likert_points=7)
    item = project.items.first()
    assignment_claim_item(project=project, item=item, annotator=annotator)
    for bad in (0, 8, "x"):
        with pytest.raises(ValidationError):
            annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(likert_value=bad))
    three = ItemFactory(project=project, responses=["a", "b", "c"])
    assignment_claim_item(project=project, item=three, annotator=annotator)
    with pytest.raises(ValidationError) as refused:
        annotation_save(project=project, item=three, annotator=annotator, save=SaveRequest(likert_value=4))
    assert "exactly two" in " ".join(refused.value.message_dict["likert_value"])


def test_accept_in_likert_mode_picks_the_preferred_side(annotator, annotator_client):
    project = _project(Project.Mode.LIKERT, annotator, likert_points=7)
    item = project.items.first()
    SuggestionFactory(item=item, preferred_position=1)
    html = annotator_client.post(f"/projects/{project.pk}/items/{item.pk}/accept/").content.decode()
    stored = judgment.likert_for_preferred(1, 7)
    assert judgment.preferred_from_likert(stored, 7) == 1
    assert f'value="{stored}" data-key=' in html
    assert "checked" in html.split(f'value="{stored}" data-key=')[1][:40]
