"""Leads create and close study links through the API and the page, and export per-participant counts and times
(JSON Lines through the API, CSV through the page and ``manage.py study_export``, all the same rows). Annotators,
participants and outsiders get 404."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.crowd.models import Participant, StudyLink
from annotation.crowd.services import study_link_create
from projects.models import Item
from tests.annotation.conftest import ifs_form, item_url
from tests.annotation.study_helpers import current_item, end_page, enter, enter_with_checks_last, prefer

JSON = {"content_type": "application/json"}


def _api(project, link=None, suffix=""):
    base = f"/api/projects/{project.pk}/study-links/"
    return base + (f"{link.pk}/" if link else "") + suffix


def test_lead_creates_lists_and_closes_a_link(project, lead_client):
    gold = Item.objects.filter(project=project).first()
    Item.objects.filter(pk=gold.pk).update(gold_position=1)
    created = lead_client.post(
        _api(project),
        {"name": "Wave 1", "max_participants": 50, "attention_item_ids": [gold.external_id], "attention_every": 3},
        **JSON,
    )
    assert created.status_code == 201, created.content
    body = created.json()
    link = StudyLink.objects.get(pk=body["id"])
    assert body["url"].endswith(f"/study/{link.token}/")
    assert len(link.token) >= 32
    assert body["completion_code"] == link.completion_code
    assert link.completion_code
    assert (link.max_participants, link.attention_item_ids, link.attention_every) == (50, [gold.external_id], 3)
    assert [row["id"] for row in lead_client.get(_api(project)).json()] == [link.pk]
    closed = lead_client.patch(_api(project, link), {"active": False}, **JSON)
    assert closed.status_code == 200
    assert closed.json()["active"] is False
    link.refresh_from_db()
    assert not link.active


def test_two_links_never_share_a_token(project, lead):
    tokens = {study_link_create(project=project, created_by=lead, name=f"l{i}").token for i in range(5)}
    assert len(tokens) == 5


def test_bad_settings_are_named_and_create_nothing(project, lead_client):
    response = lead_client.post(_api(project), {"name": "x", "attention_item_ids": ["missing-id"]}, **JSON)
    assert response.status_code == 400
    assert "missing-id" in response.json()["errors"]["attention_item_ids"][0]
    response = lead_client.post(_api(project), {"name": "x", "attention_every": 0}, **JSON)
    assert response.status_code == 400
    assert "attention_every" in response.json()["errors"]
    assert not StudyLink.objects.exists()


@pytest.mark.parametrize("who", ["annotator_client", "outsider_client"])
def test_non_leads_get_404_everywhere(project, lead, who, request):
    client = request.getfixturevalue(who)
    link = study_link_create(project=project, created_by=lead, name="Wave 1")
    assert client.get(_api(project)).status_code == 404
    assert client.post(_api(project), {"name": "mine"}, **JSON).status_code == 404
    assert client.get(_api(project, link)).status_code == 404
    assert client.patch(_api(project, link), {"active": False}, **JSON).status_code == 404
    assert client.get(_api(project, link, "participants/")).status_code == 404
    assert client.get(reverse("study_links", kwargs={"project_id": project.pk})).status_code == 404
    assert client.get(f"/projects/{project.pk}/study-links/{link.pk}/participants/?as=csv").status_code == 404
    assert StudyLink.objects.count() == 1
    link.refresh_from_db()
    assert link.active


def test_a_participant_cannot_read_the_links_or_export(project, lead):
    link = study_link_create(project=project, created_by=lead, name="Wave 1")
    client = Client()
    enter(client, link, "pid-A")
    assert client.get(_api(project)).status_code == 404
    assert client.get(_api(project, link, "participants/")).status_code == 404


def test_lead_page_creates_a_link_and_shows_its_url(project, lead_client):
    page = reverse("study_links", kwargs={"project_id": project.pk})
    refused = lead_client.post(page, {"name": "", "attention_every": "5"})
    assert refused.status_code == 422
    assert "needs a name" in refused.content.decode()
    assert lead_client.post(page, {"name": "From the page", "completion_code": "C0DE"}).status_code == 302
    link = StudyLink.objects.get()
    listing = lead_client.get(page).content.decode()
    assert f"/study/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in listing
    assert "C0DE" in listing


def _label(client, project, item, values, spent):
    response = client.post(item_url(project, item), ifs_form(item, values, time_spent_ms=spent))
    assert response.status_code == 302


@pytest.fixture
def studied(project, lead):
    """Three participants: one completed (code shown), one screened out, one who only arrived."""
    check = Item.objects.filter(project=project).order_by("pk").last()
    Item.objects.filter(pk=check.pk).update(gold_position=0)
    link = study_link_create(
        project=project,
        created_by=lead,
        name="Wave 1",
        completion_code="PAID-1",
        items_per_participant=3,
        skips_count_toward_quota=True,
        attention_item_ids=[check.external_id],
        attention_every=1,
    )
    a = Client()
    enter_with_checks_last(a, link, "pid-A")
    _label(a, project, current_item(a, project), None, 1000)
    item = current_item(a, project)
    assert item.pk == check.pk
    _label(a, project, item, prefer(item, 0), 3000)
    item = current_item(a, project)
    a.post(reverse("annotate_skip", kwargs={"project_id": project.pk, "item_id": item.pk}), {"skip_reason": "unclear"})
    assert current_item(a, project) is None
    assert "PAID-1" in end_page(a, link)

    b = Client()
    enter_with_checks_last(b, link, "pid-B")
    _label(b, project, current_item(b, project), None, 500)
    item = current_item(b, project)
    _label(b, project, item, prefer(item, 1), 700)
    assert current_item(b, project) is None

    enter(Client(), link, "pid-C")
    return link


EXPECTED = {
    "pid-A": {
        "status": "completed",
        "items_labelled": 2,
        "skips": 1,
        "total_time_ms": 4000,
        "median_time_ms": 2000,
        "attention_checks_passed": 1,
        "attention_checks_failed": 0,
        "completion_code_shown": True,
        "code_shown": "PAID-1",
    },
    "pid-B": {
        "status": "screened_out",
        "items_labelled": 2,
        "skips": 0,
        "total_time_ms": 1200,
        "median_time_ms": 600,
        "attention_checks_passed": 0,
        "attention_checks_failed": 1,
        "completion_code_shown": False,
        "code_shown": "",
    },
    "pid-C": {
        "status": "active",
        "items_labelled": 0,
        "skips": 0,
        "total_time_ms": 0,
        "median_time_ms": None,
        "attention_checks_passed": 0,
        "attention_checks_failed": 0,
        "completion_code_shown": False,
        "code_shown": "",
    },
}


def test_export_json_lines_has_the_pay_relevant_figures(project, lead_client, studied):
    response = lead_client.get(_api(project, studied, "participants/"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/jsonl")
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    by_id = {row["participant_id"]: row for row in rows}
    assert set(by_id) == set(EXPECTED)
    for pid, expected in EXPECTED.items():
        row = by_id[pid]
        assert {k: row[k] for k in expected} == expected, pid
        assert row["study_id"] == "study-1"
        assert row["session_id"] == f"session-{pid}"
        participant = Participant.objects.get(external_id=pid)
        assert row["started_at"] == participant.started_at.isoformat()
        assert (row["finished_at"] is None) == (pid == "pid-C")


def test_csv_from_the_page_the_api_and_the_command_agree(project, lead_client, studied):
    page = lead_client.get(f"/projects/{project.pk}/study-links/{studied.pk}/participants/?as=csv")
    assert page.status_code == 200
    page_csv = b"".join(page.streaming_content).decode()
    api_csv = b"".join(lead_client.get(_api(project, studied, "participants/") + "?format=csv").streaming_content)
    out = StringIO()
    call_command("study_export", str(studied.pk), "--format", "csv", stdout=out)
    assert page_csv == api_csv.decode() == out.getvalue()
    rows = list(csv.DictReader(io.StringIO(page_csv)))
    by_id = {row["participant_id"]: row for row in rows}
    assert by_id["pid-A"]["median_time_ms"] == "2000"
    assert by_id["pid-A"]["completion_code_shown"] == "True"
    assert by_id["pid-C"]["median_time_ms"] == ""
    assert by_id["pid-B"]["attention_checks_failed"] == "1"


def test_command_writes_json_lines_to_a_file(project, studied, tmp_path):
    target = tmp_path / "participants.jsonl"
    call_command("study_export", str(studied.pk), "--format", "jsonl", "--output", str(target), stderr=StringIO())
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert {row["participant_id"]: row["items_labelled"] for row in rows} == {"pid-A": 2, "pid-B": 2, "pid-C": 0}
