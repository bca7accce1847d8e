"""A project's LLM base URL cannot aim the server at files, the cloud metadata service or internal hosts."""

from __future__ import annotations

import pytest
from django.urls import reverse

from aggregation.forms import ProjectSettingsForm
from projects.llm_url import LLMURLRefused, check_llm_base_url
from suggestions.services import check_llm_configured

JSON = {"content_type": "application/json"}


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "http:// or https://"),
        ("gopher://example.org/", "http:// or https://"),
        ("http:///v1", "no host name"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://169.254.10.1/v1", "link-local"),
        ("http://[fe80::1]/v1", "link-local"),
        ("http://[::ffff:169.254.169.254]/", "cloud metadata"),
        ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata"),
        ("http://0.0.0.0:8080/v1", "not a usable host address"),
        ("http://localhost:11434/v1", "loopback or private"),
        ("http://127.0.0.1:8000/v1", "loopback or private"),
        ("http://10.1.2.3/v1", "loopback or private"),
        ("http://192.168.1.20/v1", "loopback or private"),
        ("http://[::1]/v1", "loopback or private"),
    ],
)
def test_refused_urls_name_the_reason(url, reason):
    with pytest.raises(LLMURLRefused, match=reason):
        check_llm_base_url(url, allow_private=False)


@pytest.mark.parametrize("url", ["http://169.254.169.254/", "http://[fe80::1]/", "file:///etc/passwd"])
def test_link_local_and_metadata_stay_refused_when_private_addresses_are_allowed(url):
    with pytest.raises(LLMURLRefused):
        check_llm_base_url(url, allow_private=True)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://10.0.0.5/v1"])
def test_private_endpoints_pass_when_allowed(url):
    check_llm_base_url(url, allow_private=True)


@pytest.mark.parametrize("url", ["", "https://93.184.216.34/v1", "https://api.openai.example/v1"])
def test_public_and_empty_urls_pass(url):
    check_llm_base_url(url, allow_private=False)


def test_the_api_refuses_with_the_reason_and_changes_nothing(project, lead_client, settings):
    settings.LLM_ALLOW_PRIVATE_URLS = False
    overlap = project.overlap
    response = lead_client.patch(
        f"/api/projects/{project.pk}/", {"llm_base_url": "http://169.254.169.254/", "overlap": overlap + 1}, **JSON
    )

    assert response.status_code == 400
    assert "cloud metadata" in response.json()["errors"]["llm_base_url"][0]
    project.refresh_from_db()
    assert (project.llm_base_url, project.overlap) == ("", overlap)


def test_the_settings_form_shows_the_reason_in_place(project, lead_client, settings):
    settings.LLM_ALLOW_PRIVATE_URLS = False
    initial = ProjectSettingsForm(project=project).initial
    data = {"form": "settings", **{name: value for name, value in initial.items() if value is not None}}
    data["llm_base_url"] = "file:///etc/passwd"

    response = lead_client.post(reverse("project_settings", kwargs={"project_id": project.pk}), data)

    assert "Expected an http:// or https:// URL." in response.content.decode()
    project.refresh_from_db()
    assert project.llm_base_url == ""


def test_generation_rechecks_a_url_from_the_environment(project, settings):
    settings.LLM_ALLOW_PRIVATE_URLS = False
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = "m"

    with pytest.raises(Exception, match="loopback or private"):
        check_llm_configured(project=project)

    settings.LLM_ALLOW_PRIVATE_URLS = True
    assert check_llm_configured(project=project).base_url == "http://127.0.0.1:9/v1"
