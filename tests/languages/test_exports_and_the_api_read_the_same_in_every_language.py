"""Exports and the API are for programs: the same bytes whatever language the caller's browser asks for (no
translated words, no localised numbers or dates), while the pages the same people read do change language."""

from __future__ import annotations

from django.urls import reverse

from annotation.crowd.services import study_link_create
from tests.annotation.conftest import ifs_form, item_url

LANGUAGES = ("ar", "hi", "es", "zh-hans")


def test_api_and_exports_ignore_the_language(project, lead, annotator_client, lead_client):
    for item, values in zip(
        project.items.all()[:2], ({0: (612, 103), 1: (55, 870)}, {0: (1000, 0), 1: (333, 334)}), strict=True
    ):
        assert annotator_client.post(item_url(project, item), ifs_form(item, values)).status_code == 302
    link = study_link_create(project=project, created_by=lead, name="export", completion_code="1234")
    urls = [
        reverse("api-annotations", args=[project.pk]),
        reverse("api-stats", args=[project.pk]),
        f"/api/projects/{project.pk}/",
        reverse("study_link_export", kwargs={"project_id": project.pk, "link_id": link.pk}) + "?as=csv",
        reverse("study_link_export", kwargs={"project_id": project.pk, "link_id": link.pk}) + "?as=jsonl",
    ]
    for url in urls:
        english = lead_client.get(url, HTTP_ACCEPT_LANGUAGE="en")
        assert english.status_code == 200, url
        body = b"".join(english.streaming_content) if english.streaming else english.content
        for language in LANGUAGES:
            other = lead_client.get(url, HTTP_ACCEPT_LANGUAGE=language)
            assert (b"".join(other.streaming_content) if other.streaming else other.content) == body, (url, language)
    annotations = lead_client.get(urls[0], HTTP_ACCEPT_LANGUAGE="ar").content.decode()
    assert "612" in annotations, "the saved values are in the compared bytes"
    page = lead_client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="ar").content.decode()
    assert "مشاريعك" in page, "while the page the lead reads is in Arabic"
