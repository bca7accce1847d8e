"""A lead sets up a three-method crossover study on the demo data, through the form and through the API; the
annotators are then served their planned blocks, each page in its block's method, and the design exports."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.method_study.design import williams_square
from annotation.models import Annotation, StudyCell
from projects.models import Membership, Project
from suggestions.management.commands.seed_demo import DEMO_SLUG

METHODS = ["ifs", "binary", "likert"]


@pytest.fixture
def demo(db) -> Project:
    call_command("seed_demo", stdout=io.StringIO())
    return Project.objects.get(slug=DEMO_SLUG)


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _member(project: Project, username: str):
    return Membership.objects.get(project=project, user__username=username).user


def _annotator_ids(project: Project) -> list[int]:
    return list(
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR).values_list("user_id", flat=True)
    )


def _check_plan(project: Project) -> None:
    cells = list(StudyCell.objects.filter(study__project=project))
    items = set(project.items.values_list("pk", flat=True))
    assert {(c.item_id, c.method) for c in cells} == {(i, m) for i in items for m in METHODS}
    for annotator_id in _annotator_ids(project):
        mine = sorted((c for c in cells if c.annotator_id == annotator_id), key=lambda c: c.sequence)
        assert {c.method for c in mine} == set(METHODS)
        assert len({c.item_id for c in mine}) == len(mine)
    # Three annotators, three methods: three different Williams rows, so each method comes first for someone.
    firsts = {c.method for c in cells if c.sequence == 0}
    assert firsts == set(METHODS)


def test_the_form_sets_up_the_study_and_the_design_exports(demo):
    client = _logged_in(_member(demo, "lead"))
    page = client.get(f"/projects/{demo.pk}/method-study/")
    assert page.status_code == 200
    assert b"method-study-form" in page.content
    response = client.post(
        f"/projects/{demo.pk}/method-study/",
        {"methods": METHODS, "annotator_ids": _annotator_ids(demo), "likert_points": "5", "block_size": ""},
    )
    assert response.status_code == 302
    demo.refresh_from_db()
    assert demo.mode == Project.Mode.CROSSOVER
    assert demo.likert_points == 5
    _check_plan(demo)
    summary = client.get(f"/projects/{demo.pk}/method-study/")
    assert b"Likert scale (5 points)" in summary.content
    assert b"120 planned judgments" in summary.content

    design = client.get(f"/projects/{demo.pk}/method-study/design.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(design.streaming_content).decode())))
    assert len(rows) == 120
    assert Counter(row["method"] for row in rows) == {"ifs": 40, "binary": 40, "likert": 40}
    assert {row["status"] for row in rows} == {"open"}
    rows_of = {row["annotator"]: int(row["williams_row"]) for row in rows}
    order = [r["method"] for r in rows if r["annotator"] == "annotator1" and r["sequence"] in {"1", "15", "29"}]
    assert order == [METHODS[i] for i in williams_square(3)[rows_of["annotator1"]]]


def test_the_form_says_why_two_annotators_are_not_enough(demo):
    client = _logged_in(_member(demo, "lead"))
    two = _annotator_ids(demo)[:2]
    response = client.post(f"/projects/{demo.pk}/method-study/", {"methods": METHODS, "annotator_ids": two})
    assert response.status_code == 422
    assert b"at least 3 annotators" in response.content
    assert not StudyCell.objects.exists()
    demo.refresh_from_db()
    assert demo.mode == Project.Mode.IFS


def test_the_api_sets_up_the_study_and_annotators_get_their_blocks_in_order(demo):
    lead = _logged_in(_member(demo, "lead"))
    body = {"methods": METHODS, "annotator_ids": _annotator_ids(demo), "likert_points": 7}
    created = lead.post(f"/api/projects/{demo.pk}/method-study/", body, content_type="application/json")
    assert created.status_code == 201, created.content
    assert created.json()["summary"]["planned"] == 120
    assert lead.post(f"/api/projects/{demo.pk}/method-study/", body, content_type="application/json").status_code == 400
    demo.refresh_from_db()
    _check_plan(demo)

    annotator = _member(demo, "annotator2")
    client = _logged_in(annotator)
    plan = list(StudyCell.objects.filter(study__project=demo, annotator=annotator).order_by("sequence"))
    # Through the first block and into the second (chunks of 14, 14 and 12 items: 40 items over three people).
    second = next(i for i, c in enumerate(plan) if c.block == 1)
    assert second in (12, 14)
    for cell in plan[: second + 2]:
        page = client.get(f"/projects/{demo.pk}/annotate/", follow=True)
        html = page.content.decode()
        assert f'data-item="{cell.item_id}"' in html, "the planned item, in the planned order"
        assert "study-block" in html
        payload = {
            "ifs": {"mu": "0.6"},
            "binary": {"choice": "0"},
            "likert": {"likert": "2"},
        }[cell.method]
        _save(client, demo, cell, html, payload)
        saved = Annotation.objects.get(item_id=cell.item_id, annotator=annotator)
        assert saved.mode == cell.method
    assert plan[second - 1].method != plan[second].method, "a new block, a new method"


def _save(client: Client, project: Project, cell: StudyCell, html: str, payload: dict[str, str]) -> None:
    # The page's own field names: a form for another method would not carry them.
    data: dict[str, str] = {"time_spent_ms": "1000"}
    if cell.method == "binary":
        data["binary_choice"] = payload["choice"]
        assert 'name="binary_choice"' in html
        assert 'name="likert_value"' not in html
    elif cell.method == "likert":
        data["likert_value"] = payload["likert"]
        assert 'name="likert_value"' in html
        assert 'name="binary_choice"' not in html
    else:
        for response in cell.item.responses.all():
            for criterion in project.criteria.all():
                data[f"mu-{response.position}-{criterion.pk}"] = "600"
                data[f"nu-{response.position}-{criterion.pk}"] = "100"
    for name in data:
        if name != "time_spent_ms":
            assert f'name="{name}"' in html
    response = client.post(f"/projects/{project.pk}/items/{cell.item_id}/annotate/", data)
    assert response.status_code in (200, 302), response.content[:2000]
    assert Annotation.objects.filter(item_id=cell.item_id, annotator_id=cell.annotator_id).exists(), response.content[
        :3000
    ]
