"""A handoff stops labelling on every request, not only the next claim: a page opened before it cannot save or skip,
a claim held across it is not served again, a verification request drawn before it is not served, and the API save
is refused the same way. Audit requests, which a lead asks for after handing off, are still served and saved. Undo
brings the held claim back.

Each refusal is checked to have written nothing, and each test also shows the same request succeeding while the
project collects, so a page that refuses everything cannot pass."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.checks import PAUSED
from annotation.models import Annotation, Assignment, LabelRequest
from annotation.queue.services import assignment_claim_next
from projects.models import Item, Project
from tests.annotation.conftest import ifs_form, item_url, next_url
from tests.conftest import _logged_in

JSON = {"content_type": "application/json"}


def _hand_off(project: Project) -> None:
    project.phase = Project.Phase.HANDED_OFF
    project.save(update_fields=["phase"])


def _request(project, item, user, kind: str) -> LabelRequest:
    return LabelRequest.objects.create(
        project=project,
        item=item,
        annotator=user,
        kind=kind,
        inclusion_probability=None if kind == "verification" else 0.25,
        machine_preferred=1,
    )


def _skip_url(project, item) -> str:
    return reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk})


def _accept_url(project, item) -> str:
    return reverse("annotate_accept", kwargs={"project_id": project.pk, "item_id": item.pk})


def _paused(response) -> bool:
    return response.status_code == 200 and "Labelling is paused" in response.content.decode()


def test_an_open_page_cannot_save_or_skip_after_the_handoff(project, annotator, annotator_client) -> None:
    first = assignment_claim_next(project=project, annotator=annotator).item
    assert annotator_client.get(item_url(project, first)).status_code == 200
    _hand_off(project)

    saved = annotator_client.post(item_url(project, first), ifs_form(first), HTTP_HX_REQUEST="true")
    skipped = annotator_client.post(
        _skip_url(project, first),
        {"skip_reason": "I cannot judge this topic"},
        HTTP_HX_REQUEST="true",
    )

    assert _paused(saved), saved.content.decode()[:500]
    assert PAUSED in saved.content.decode()
    assert 'name="client_token"' not in saved.content.decode(), "no item form comes back"
    assert _paused(skipped)
    assert not Annotation.objects.filter(project=project).exists()
    assert not Assignment.objects.filter(project=project, status=Assignment.Status.SKIPPED).exists()

    project.phase = Project.Phase.COLLECTING
    project.save(update_fields=["phase"])
    again = annotator_client.post(item_url(project, first), ifs_form(first))
    assert again.status_code == 302, "the same save goes through while the project collects"
    assert Annotation.objects.filter(project=project, item=first).count() == 1


def test_a_claim_held_across_the_handoff_is_not_served_again_until_undo(project, annotator2) -> None:
    held = assignment_claim_next(project=project, annotator=annotator2)
    _hand_off(project)
    client = _logged_in(annotator2)

    reload = client.get(next_url(project))
    opened = client.get(item_url(project, held.item))

    assert _paused(reload)
    assert _paused(opened)
    assert assignment_claim_next(project=project, annotator=annotator2) is None

    project.phase = Project.Phase.COLLECTING  # undo
    project.save(update_fields=["phase"])
    assert assignment_claim_next(project=project, annotator=annotator2).pk == held.pk


def test_only_audit_requests_are_served_and_saved_after_the_handoff(project, annotator, annotator_client) -> None:
    items = list(Item.objects.filter(project=project).order_by("pk"))
    verification = _request(project, items[0], annotator, kind="verification")
    _hand_off(project)

    assert assignment_claim_next(project=project, annotator=annotator) is None, "the verification waits"
    refused = annotator_client.post(item_url(project, items[0]), ifs_form(items[0]), HTTP_HX_REQUEST="true")
    assert _paused(refused)
    verification.refresh_from_db()
    assert verification.status == LabelRequest.Status.OPEN

    audit = _request(project, items[1], annotator, kind="audit")
    served = assignment_claim_next(project=project, annotator=annotator)
    assert served is not None
    assert served.item_id == items[1].pk
    saved = annotator_client.post(item_url(project, items[1]), ifs_form(items[1]))
    assert saved.status_code == 302
    audit.refresh_from_db()
    assert audit.status == LabelRequest.Status.ANSWERED
    assert list(Annotation.objects.filter(project=project).values_list("item_id", flat=True)) == [items[1].pk]


def test_the_api_save_is_refused_with_the_same_message(project, annotator) -> None:
    item = Item.objects.filter(project=project).order_by("pk").first()
    client: Client = _logged_in(annotator)
    url = f"/api/projects/{project.pk}/annotations/"
    body = {"item": item.pk, "values": [{"position": 0, "mu": 0.7, "nu": 0.1}, {"position": 1, "mu": 0.2, "nu": 0.6}]}
    _hand_off(project)

    refused = client.post(url, body, **JSON)

    assert refused.status_code == 400
    assert "Labelling is paused" in refused.content.decode()
    assert not Annotation.objects.filter(project=project).exists()
    project.phase = Project.Phase.COLLECTING
    project.save(update_fields=["phase"])
    assert client.post(url, body, **JSON).status_code == 201


@pytest.mark.parametrize("phase", [Project.Phase.HANDED_OFF, Project.Phase.CLOSED])
def test_accept_on_an_open_page_is_refused(project, annotator, annotator_client, phase) -> None:
    item = assignment_claim_next(project=project, annotator=annotator).item
    project.phase = phase
    project.save(update_fields=["phase"])
    response = annotator_client.post(_accept_url(project, item), {}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert ("Labelling is paused" if phase == Project.Phase.HANDED_OFF else "closed") in response.content.decode()
