"""The contracts beside the handoff threshold, from the database to the card and the API: each shows its verdict,
its sentence (or the reason it is withheld) and its n; the selective-risk contract reads the blind answers to the
certification draw; the alternative annotator test and the distributional contract read the blind overlap of an IFS
project; the budget forecast answers for any budget the API is asked about, and refuses a half-given one."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import LabelRequest
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Membership, Project
from suggestions.certification import labeling_figures_recompute
from suggestions.requests import label_requests_draw
from tests.factories import MembershipFactory, ProjectFactory, SuggestionFactory, UserFactory
from tests.suggestions.helpers import OTHER, PREFERRED, items_create, label

pytestmark = pytest.mark.django_db


def _binary_project(lead) -> Project:
    project = ProjectFactory(
        mode=Project.Mode.BINARY, blind_rate=0.0, overlap=1, handoff_agreement_threshold=0.9,
        handoff_minimum_blind_comparisons=10,
    )  # fmt: skip
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    for i in range(2):
        MembershipFactory(project=project, user=UserFactory(username=f"c{project.pk}-{i}"))
    for index, item in enumerate(items_create(project, 160, prefix=f"c{project.pk}")):
        values = [(800, 100), (100, 800)] if index % 2 else [(600, 300), (300, 600)]
        SuggestionFactory(item=item, preferred_position=0, values=values)
    return project


def _answer(project: Project, kind: str, wrong: set[int]) -> None:
    for request in LabelRequest.objects.filter(project=project, kind=kind, status=LabelRequest.Status.OPEN):
        choice = 1 if request.item_id in wrong else 0
        annotation_save(project=project, item=request.item, annotator=request.annotator,
                        save=SaveRequest(binary_choice=choice))  # fmt: skip


def test_the_certification_sample_gives_selective_risk_and_the_api_a_budget(lead, outsider) -> None:
    project = _binary_project(lead)
    label_requests_draw(project=project, kind="calibration", size=40, labels_per_item=1, by_confidence=True)
    _answer(project, "calibration", set())
    label_requests_draw(project=project, kind="certification", size=120, labels_per_item=1)
    drawn = sorted(LabelRequest.objects.filter(project=project, kind="certification").values_list("item_id", flat=True))
    _answer(project, "certification", {drawn[0]})  # 1 of 120 disagrees with the model
    contracts = labeling_figures_recompute(project_id=project.pk)["contracts"]

    risk = contracts["selective_risk"]
    assert risk["draw_kind"] == "certification"
    assert risk["verdict"] == "holds"
    assert risk["target"] == pytest.approx(0.1)  # 1 − the handoff threshold
    assert risk["n"] == 120
    assert risk["share"] == pytest.approx(1.0)
    assert "at most 10% of the model's labels" in risk["sentence"]
    people = contracts["no_worse_than_human"]
    assert people["verdict"] == "withheld"
    assert "needs 3" in people["reason"]
    assert contracts["distributional"]["verdict"] == "withheld"
    assert "only IFS" in contracts["distributional"]["reason"]
    assert contracts["budget_first"]["verdict"] == "forecast"
    assert contracts["budget_first"]["n"] == 100  # twice the 40 calibration answers, at least 100

    client = Client()
    client.force_login(lead)
    stats = client.get(f"/api/projects/{project.pk}/stats/").json()
    assert stats["labeling"]["contracts"]["selective_risk"]["verdict"] == "holds"
    answer = client.get(f"/api/projects/{project.pk}/contracts/", {"money": 50, "reward_per_label": 0.1}).json()
    budget = answer["contracts"]["budget_first"]
    assert budget["n"] == 500
    assert [row["target"] for row in budget["rows"]] == [0.02, 0.05, 0.1, 0.2]
    assert answer["contracts"]["selective_risk"]["n"] == 120
    refused = client.get(f"/api/projects/{project.pk}/contracts/", {"money": 50})
    assert refused.status_code == 400
    assert "reward_per_label" in str(refused.json())

    page = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "Contracts beside the handoff threshold" in page
    assert 'id="contract-selective_risk"' in page
    assert "Learn-then-Test, n = 120" in page

    client.force_login(outsider)
    assert client.get(f"/api/projects/{project.pk}/contracts/").status_code == 404


def test_an_ifs_overlap_gives_the_alternative_annotator_test_and_the_distributional_contract(lead) -> None:
    project = ProjectFactory(mode=Project.Mode.IFS, blind_rate=0.0, overlap=4)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    people = [UserFactory(username=f"i{project.pk}-{i}") for i in range(4)]
    for person in people:
        MembershipFactory(project=project, user=person)
    items = items_create(project, 40, prefix=f"i{project.pk}")
    for index, item in enumerate(items):
        SuggestionFactory(item=item, preferred_position=0, values=[PREFERRED, OTHER])
        for k, person in enumerate(people):
            # The last person disagrees with everyone on a quarter of the items; the model never does.
            label(project, item, person, 1 if (k == 3 and index % 4 == 0) else 0)
    contracts = labeling_figures_recompute(project_id=project.pk)["contracts"]

    alt = contracts["no_worse_than_human"]
    assert alt["verdict"] == "holds"
    assert alt["n"] == 40
    assert alt["winning_rate"] == pytest.approx(1.0)
    assert "4 of 4 annotators" in alt["sentence"]
    dist = contracts["distributional"]
    assert dist["n"] == 40
    assert dist["verdict"] == "holds"  # the model states the (μ, ν) most people gave
    assert dist["model_distance"] < dist["ceiling"] + 0.05
    assert contracts["selective_risk"]["verdict"] == "withheld"
