"""In a crossover project an annotator labels only their planned items, each with its planned method: an item
outside their share is refused by the page and the API, a judgment in another method is refused, and the design
export records what became of each planned judgment. The mode is not switched from the settings page."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from annotation import services
from annotation.imports.labels import labels_import
from annotation.models import Annotation, StudyCell
from annotation.queue import services as claim_services
from annotation.saving import SaveRequest
from projects.imports.rows import ImportRejected
from projects.models import Membership
from projects.services import check_project_settings
from tests.factories import MembershipFactory, ProjectFactory, UserFactory


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_item_outside_the_share_is_refused_everywhere(study):
    project, _lead, _people = study
    newcomer = UserFactory(username="late")
    MembershipFactory(project=project, user=newcomer, role=Membership.Role.ANNOTATOR)
    item = project.items.first()
    assert claim_services.assignment_claim_next(project=project, annotator=newcomer) is None
    with pytest.raises(ValidationError, match="not in your part"):
        services.annotation_save(project=project, item=item, annotator=newcomer, save=SaveRequest(binary_choice=0))
    client = _client(newcomer)
    page = client.get(f"/projects/{project.pk}/items/{item.pk}/annotate/")
    assert b"not in your part of the method study" in page.content
    assert b'data-item="' not in page.content
    api = client.post(
        f"/api/projects/{project.pk}/annotations/",
        {"item": item.pk, "binary_choice": 0},
        content_type="application/json",
    )
    assert api.status_code in (400, 404)
    assert not Annotation.objects.filter(annotator=newcomer).exists()


def test_a_judgment_in_another_method_is_refused(study):
    project, _lead, people = study
    cell = StudyCell.objects.filter(annotator=people[0]).order_by("sequence").first()
    other = {"binary": {"likert_value": 2}, "likert": {"binary_choice": 0}, "ifs": {"binary_choice": 0}}[cell.method]
    claim_services.assignment_claim_next(project=project, annotator=people[0])
    with pytest.raises(ValidationError):
        services.annotation_save(project=project, item=cell.item, annotator=people[0], save=SaveRequest(**other))
    assert not Annotation.objects.exists()


def test_the_design_export_records_saves_and_skips(study):
    project, lead, people = study
    first, second = StudyCell.objects.filter(annotator=people[1]).order_by("sequence")[:2]
    claim_services.assignment_claim_next(project=project, annotator=people[1])
    answer = {"binary": {"binary_choice": 1}, "likert": {"likert_value": 4}}.get(first.method) or {
        "values": [{"response": p, "criterion": "overall", "mu": 500, "nu": 100 + 300 * p} for p in (0, 1)]
    }
    services.annotation_save(project=project, item=first.item, annotator=people[1], save=SaveRequest(**answer))
    claimed = claim_services.assignment_claim_next(project=project, annotator=people[1])
    assert claimed.item_id == second.item_id
    services.assignment_skip(project=project, item=second.item, annotator=people[1], reason="unreadable")
    response = _client(lead).get(f"/api/projects/{project.pk}/method-study/design/")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    mine = {int(r["sequence"]): r for r in rows if r["annotator"] == people[1].username}
    assert mine[1]["status"] == "saved"
    assert mine[1]["method"] == first.method
    assert mine[1]["saved_at"]
    assert mine[2]["status"] == "skipped"
    assert {r["status"] for k, r in mine.items() if k > 2} == {"open"}
    assert Annotation.objects.get(annotator=people[1]).mode == first.method


def test_the_settings_page_does_not_switch_into_or_out_of_crossover(study):
    project, _lead, _people = study
    with pytest.raises(ValidationError, match="its own page"):
        check_project_settings(project=project, changes={"mode": "ifs"})
    with pytest.raises(ValidationError, match="its own page"):
        check_project_settings(project=ProjectFactory(), changes={"mode": "crossover"})
    check_project_settings(project=project, changes={"mode": "crossover", "overlap": 5})


def test_labels_cannot_be_imported_around_the_plan(study):
    project, _lead, _people = study
    item = project.items.first()
    row = f'{{"item": "{item.external_id}", "annotator": "outside", "mode": "crossover", "choice": 0}}'
    with pytest.raises(ImportRejected, match="takes no imported labels"):
        labels_import(project=project, lines=[row])
    assert not Annotation.objects.exists()
