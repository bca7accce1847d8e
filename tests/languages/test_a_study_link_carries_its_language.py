"""A lead picks a study link's language: the URL to give the platform carries ?lang=, so every participant from it
gets that language whatever their browser asks for. An unknown language is refused with a clear message and
creates nothing, and the database refuses one written around the service."""

from __future__ import annotations

import pytest
from django.db import IntegrityError
from django.urls import reverse

from annotation.crowd.models import StudyLink


def _create(lead_client, project, **fields):
    data = {"name": "wave", "attention_every": "5", "attention_max_failures": "0", "attention_min_answered": "0"}
    return lead_client.post(reverse("study_links", kwargs={"project_id": project.pk}), data | fields)


def test_the_link_url_carries_the_chosen_language(lead_client, project):
    assert _create(lead_client, project, language="hi").status_code == 302
    link = StudyLink.objects.get(project=project)
    assert link.language == "hi"
    page = lead_client.get(reverse("study_links", kwargs={"project_id": project.pk})).content.decode()
    assert f"/study/{link.token}/?PROLIFIC_PID=" in page
    assert "&amp;lang=hi</code>" in page
    participant = lead_client.__class__(HTTP_ACCEPT_LANGUAGE="es")
    arrived = participant.get(f"/study/{link.token}/?PROLIFIC_PID=p9&STUDY_ID=s&SESSION_ID=t&lang=hi", follow=True)
    assert '<html lang="hi"' in arrived.content.decode()


def test_without_a_language_the_url_has_no_lang(lead_client, project):
    assert _create(lead_client, project).status_code == 302
    page = lead_client.get(reverse("study_links", kwargs={"project_id": project.pk})).content.decode()
    assert "lang=" not in page.split('class="study-url"')[1].split("</code>")[0]


def test_an_unknown_language_is_refused_and_creates_nothing(lead_client, project):
    response = _create(lead_client, project, language="xx")
    assert response.status_code == 422
    assert "Unknown language &#x27;xx&#x27;: expected one of en, hi, ar, es, zh-hans." in response.content.decode()
    assert not StudyLink.objects.exists()


def test_the_database_refuses_an_unknown_language(project):
    with pytest.raises(IntegrityError):
        StudyLink.objects.create(project=project, name="x", token="t" * 20, completion_code="C", language="fr")


def test_the_api_takes_and_returns_the_language(lead_client, project):
    url = f"/api/projects/{project.pk}/study-links/"
    created = lead_client.post(url, {"name": "api", "language": "ar"}, content_type="application/json")
    assert created.status_code == 201, created.content
    assert created.json()["language"] == "ar"
    assert created.json()["url"].endswith("?lang=ar")
    refused = lead_client.post(url, {"name": "api2", "language": "klingon"}, content_type="application/json")
    assert refused.status_code == 400
    assert StudyLink.objects.filter(project=project).count() == 1
