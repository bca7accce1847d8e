"""The lead's reading options (scheme, ratings_rule, statuses, items_key, scale) reach the converters from the import
API and the management commands, bad ones are refused before anything is stored, and the ratings rule is stated in
the job's result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from projects.formats.common import RATINGS_NOTES
from projects.models import Item, Job, Membership, Project
from tests.factories import MembershipFactory, ProjectFactory
from tests.formats.helpers import snapshot

pytestmark = pytest.mark.django_db

REAL = Path(__file__).parent / "data" / "real"


@pytest.fixture
def binary_project(lead, annotator, settings, tmp_path) -> Project:
    settings.MEDIA_ROOT = tmp_path
    project = ProjectFactory(mode=Project.Mode.BINARY)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    return project


def _post(client, project: Project, endpoint: str, name: str, capture, **fields: Any) -> dict[str, Any]:
    upload = SimpleUploadedFile(name, (REAL / name).read_bytes())
    with capture(execute=True):
        response = client.post(f"/api/projects/{project.pk}/{endpoint}/import/", {"file": upload, **fields})
    assert response.status_code == 202, response.json()
    return client.get(response.json()["url"]).json()


def test_hf_ratings_rule_through_the_api_and_the_rule_in_the_result(
    binary_project, lead_client, django_capture_on_commit_callbacks
):
    items = _post(lead_client, binary_project, "items", "hf_ultrafeedback_argilla_cleaned.jsonl",
                  django_capture_on_commit_callbacks, format="hf")  # fmt: skip
    refused = _post(lead_client, binary_project, "labels", "hf_ultrafeedback_argilla_cleaned.jsonl",
                    django_capture_on_commit_callbacks, format="hf")  # fmt: skip
    labels = _post(lead_client, binary_project, "labels", "hf_ultrafeedback_argilla_cleaned.jsonl",
                   django_capture_on_commit_callbacks, format="hf", ratings_rule="binary")  # fmt: skip

    assert items["status"] == "done"
    assert refused["status"] == "failed"
    assert "one rating per response" in refused["errors"][0]["message"]
    assert labels["status"] == "done", labels
    assert labels["result"]["created"] == 1
    assert labels["result"]["notes"] == [RATINGS_NOTES["binary"]]
    item = Item.objects.get(project=binary_project)
    assert item.lead_metadata["source"] == "evol_instruct"
    assert sorted(item.responses.values_list("model_name", flat=True)) == ["pythia-12b", "starchat"]


def test_ultrafeedback_columns_never_reach_annotators(
    binary_project, lead_client, annotator_client, django_capture_on_commit_callbacks
):
    _post(lead_client, binary_project, "items", "hf_ultrafeedback_binarized.jsonl",
          django_capture_on_commit_callbacks, format="hf")  # fmt: skip

    page = annotator_client.get(f"/api/projects/{binary_project.pk}/items/").json()
    (item,) = page["results"]
    seen = str(item)
    assert item.get("metadata", {}) == {}  # annotators get prompt and responses only
    assert "score_chosen" not in seen
    assert "messages" not in seen
    assert sorted(r["text"] for r in item["responses"]) == ["Eight.", "Six, like all insects."]


def test_argilla_statuses_as_a_multipart_list(binary_project, lead_client, django_capture_on_commit_callbacks):
    _post(lead_client, binary_project, "items", "argilla_to_json.json", django_capture_on_commit_callbacks,
          format="argilla")  # fmt: skip
    labels = _post(lead_client, binary_project, "labels", "argilla_to_json.json", django_capture_on_commit_callbacks,
                   format="argilla", statuses=["submitted", "unknown"])  # fmt: skip

    assert labels["status"] == "done", labels
    assert labels["result"]["created"] == 3
    job = Job.objects.get(pk=labels["id"])
    assert job.options["statuses"] == ["submitted", "unknown"]


def test_bad_reading_options_are_refused_by_name(binary_project, lead_client):
    upload = SimpleUploadedFile("x.jsonl", (REAL / "hf_ultrafeedback_binarized.jsonl").read_bytes())

    response = lead_client.post(
        f"/api/projects/{binary_project.pk}/labels/import/",
        {"file": upload, "format": "hf", "ratings_rule": "average", "statuses": ["maybe"]},
    )

    assert response.status_code == 400
    assert {"ratings_rule", "statuses"} <= set(response.json()["errors"])
    assert not Job.objects.filter(project=binary_project).exists()


def test_commands_take_the_scheme_and_the_scale(capsys):
    project = ProjectFactory(mode=Project.Mode.LIKERT, likert_points=7, slug="llm-preference")

    call_command("import_items", "llm-preference", str(REAL / "potato_llm_responses.json"), "--format", "potato",
                 "--items-key", "responses")  # fmt: skip
    call_command("import_labels", "llm-preference", str(REAL / "potato_llm_preference_annotations.jsonl"),
                 "--format", "potato", "--scheme", "overall_preference", "--scale", "1..6")  # fmt: skip

    assert snapshot(project) == (3, 3)
    assert "3 labels imported" in capsys.readouterr().out
