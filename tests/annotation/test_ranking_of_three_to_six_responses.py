"""Binary items with three to six responses are ranked, best first: the ranking is stored by stored position with its
head as the binary choice (so the binary figures read it as the pick and two-response items are untouched), a bad
ranking is refused by name and changes nothing, the database refuses a ranking whose head is not the choice, and the
``rankings`` export lists the order and every pair it implies."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from aggregation.exports.stream import ExportOptions, export_lines
from annotation.models import Annotation
from annotation.queue.services import assignment_claim_item
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Membership, Project
from tests.annotation.conftest import item_url
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory

ANSWERS = ["Answer zero.", "Answer one.", "Answer two.", "Answer three."]


def _project(annotator, *, responses: list[str]) -> Project:
    project = ProjectFactory(mode=Project.Mode.BINARY, blind_rate=0)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    ItemFactory(project=project, is_blind=False, responses=responses)
    return project


def test_the_page_ranks_four_responses_and_stores_the_order_by_position(annotator, annotator_client):
    project = _project(annotator, responses=ANSWERS)
    item = project.items.get()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'id="ranking-input"' in html
    assert 'name="ranking" id="ranking-value" value=""' in html  # nothing is assumed before the annotator ranks
    assert 'name="binary_choice"' not in html

    annotator_client.post(item_url(project, item), {"ranking": "2,0,3,1", "client_token": "r1"})

    annotation = Annotation.objects.get(item=item)
    assert annotation.ranking == [2, 0, 3, 1]
    assert annotation.binary_choice == 2
    assert annotation.revisions.get().payload["ranking"] == [2, 0, 3, 1]
    # Reopened, the rows come in the saved order with the field filled.
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'name="ranking" id="ranking-value" value="2,0,3,1"' in html


def test_two_responses_keep_the_plain_choice(annotator, annotator_client):
    project = _project(annotator, responses=ANSWERS[:2])
    item = project.items.get()
    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'id="ranking-input"' not in html
    assert 'name="binary_choice" value="-1"' in html
    assignment_claim_item(project=project, item=item, annotator=annotator)
    with pytest.raises(ValidationError, match="Two responses are compared with a choice"):
        annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(ranking=[1, 0]))
    assert not Annotation.objects.exists()


@pytest.mark.parametrize(
    ("save", "message"),
    [
        (SaveRequest(ranking=[0, 0, 1]), "Rank every response once"),
        (SaveRequest(ranking=[0, 1]), "Rank every response once"),
        (SaveRequest(ranking=[0, 1, 5]), "Rank every response once"),
        (SaveRequest(ranking=[0, "x", 1]), "Expected the stored positions"),
        (SaveRequest(ranking=[0, 1, 2], binary_choice=1), "first response must be the chosen one"),
        (SaveRequest(ranking=[0, 1, 2], binary_choice=-1), "first response must be the chosen one"),
    ],
)
def test_a_bad_ranking_is_refused_by_name_and_saves_nothing(annotator, save, message):
    project = _project(annotator, responses=ANSWERS[:3])
    item = project.items.get()
    assignment_claim_item(project=project, item=item, annotator=annotator)
    with pytest.raises(ValidationError, match=message):
        annotation_save(project=project, item=item, annotator=annotator, save=save)
    assert not Annotation.objects.exists()


def test_a_page_save_without_a_ranking_asks_for_one(annotator, annotator_client):
    project = _project(annotator, responses=ANSWERS[:3])
    item = project.items.get()
    response = annotator_client.post(item_url(project, item), {"ranking": "", "client_token": "r2"})
    assert response.status_code == 422
    assert "Rank the responses before saving." in response.content.decode()
    assert not Annotation.objects.exists()


def test_the_database_refuses_a_ranking_that_does_not_head_with_the_choice(annotator):
    project = _project(annotator, responses=ANSWERS[:3])
    item = project.items.get()
    assignment_claim_item(project=project, item=item, annotator=annotator)
    annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(ranking=[1, 2, 0]))
    stored = Annotation.objects.filter(item=item)
    for bad in ({"ranking": [2, 1, 0]}, {"ranking": [1, 2]}, {"binary_choice": 0}):
        with pytest.raises(IntegrityError), transaction.atomic():
            stored.update(**bad)
    assert stored.get().ranking == [1, 2, 0]


def test_the_rankings_export_lists_the_order_and_every_implied_pair(annotator):
    project = _project(annotator, responses=ANSWERS)
    item = project.items.get()
    assignment_claim_item(project=project, item=item, annotator=annotator)
    annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(ranking=[3, 1, 0, 2]))

    (line,) = [json.loads(x) for x in export_lines(project=project, options=ExportOptions(format="rankings"))]

    assert line["id"] == item.external_id
    assert line["annotator"] == annotator.username
    assert line["ranking"] == [3, 1, 0, 2]
    assert line["responses"] == ["Answer three.", "Answer one.", "Answer zero.", "Answer two."]
    assert len(line["pairs"]) == 6  # 4 choose 2
    assert {(p["chosen_position"], p["rejected_position"]) for p in line["pairs"]} == {
        (3, 1), (3, 0), (3, 2), (1, 0), (1, 2), (0, 2)
    }  # fmt: skip
    assert line["pairs"][0]["chosen"] == "Answer three."
    # The raw labels carry the ranking too, beside the choice it heads.
    (raw,) = [json.loads(x) for x in export_lines(project=project, options=ExportOptions(format="annotations"))]
    assert (raw["ranking"], raw["choice"], raw["both_bad"]) == ([3, 1, 0, 2], 3, False)


def test_the_api_saves_a_ranking_and_a_both_bad_and_reads_them_back(annotator, annotator_client):
    ranked = _project(annotator, responses=ANSWERS[:3])
    url = f"/api/projects/{ranked.pk}/annotations/"
    item = ranked.items.get()
    saved = annotator_client.post(url, {"item": item.pk, "ranking": [1, 2, 0]}, content_type="application/json")
    assert saved.status_code == 201, saved.content
    assert (saved.json()["ranking"], saved.json()["binary_choice"]) == ([1, 2, 0], 1)

    pair = _project(annotator, responses=ANSWERS[:2])
    url = f"/api/projects/{pair.pk}/annotations/"
    item = pair.items.get()
    saved = annotator_client.post(url, {"item": item.pk, "both_bad": True}, content_type="application/json")
    assert saved.status_code == 201, saved.content
    assert (saved.json()["both_bad"], saved.json()["binary_choice"]) == (True, -1)
    refused = annotator_client.post(url, {"item": item.pk, "ranking": [0, 1]}, content_type="application/json")
    assert refused.status_code == 400
    assert "Two responses are compared with a choice" in refused.content.decode()
