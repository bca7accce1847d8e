"""A file that cannot be read as a whole says what is wrong with it (never "failed unexpectedly"): not UTF-8 (the
encoding expected and the byte offset), invalid Parquet, JSON nested too deeply; nothing is written."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from projects.models import Item, Project
from tests.factories import MembershipFactory, ProjectFactory


def _import(client, project, name: str, data: bytes, capture, *, kind: str = "items", **options):
    with capture(execute=True):
        response = client.post(
            f"/api/projects/{project.pk}/{kind}/import/", {"file": SimpleUploadedFile(name, data), **options}
        )
    assert response.status_code == 202, response.content
    return client.get(response.json()["url"]).json()


@pytest.fixture
def binary_project(lead) -> Project:
    project = ProjectFactory(mode=Project.Mode.BINARY)
    MembershipFactory(project=project, user=lead, role="lead")
    return project


def _no_unexpected(job) -> None:
    assert job["status"] == "failed", job
    assert "unexpectedly" not in json.dumps(job)


def _named(job, *phrases: str) -> bool:
    """The file's problem is named, in the job's detail or as the error of the whole file (record 1, "file")."""
    said = [job["result"].get("detail", ""), *(error["message"] for error in job["errors"])]
    return any(phrase in text for text in said for phrase in phrases)


def test_latin1_native_items_name_the_line_and_byte_offset(project, lead_client, django_capture_on_commit_callbacks):
    good = json.dumps({"id": "a", "prompt": "p", "responses": ["x", "y"]}).encode() + b"\n"
    bad = json.dumps({"id": "b", "prompt": "caf\u00e9", "responses": ["x", "y"]}, ensure_ascii=False).encode("latin-1")

    job = _import(lead_client, project, "items.jsonl", good + bad, django_capture_on_commit_callbacks)

    _no_unexpected(job)
    offset = len(good) + bad.index(b"\xe9")
    assert f"byte offset {offset}" in job["result"]["detail"]
    assert "UTF-8" in job["result"]["detail"]
    assert job["errors"][0]["line"] == 2
    assert "0xe9" in job["errors"][0]["message"]
    assert not Item.objects.filter(project=project, external_id__in=["a", "b"]).exists()


def test_latin1_tool_file_names_the_encoding_and_offset(
    binary_project, lead_client, django_capture_on_commit_callbacks
):
    data = json.dumps([{"id": 1, "data": {"prompt": "caf\u00e9", "answer1": "a", "answer2": "b"}}]).encode("latin-1")
    data = data.replace(b"\\u00e9", b"\xe9")

    job = _import(
        lead_client, binary_project, "ls.json", data, django_capture_on_commit_callbacks, format="label-studio"
    )

    _no_unexpected(job)
    offset = data.index(b"\xe9")
    assert f"byte offset {offset}" in job["result"]["detail"]
    assert "Penumbra expects UTF-8" in job["result"]["detail"]


def test_invalid_parquet_is_named(binary_project, lead_client, django_capture_on_commit_callbacks):
    job = _import(
        lead_client, binary_project, "d.parquet", b"PAR1" + b"\x00garbage" * 10, django_capture_on_commit_callbacks,
        format="hf",
    )  # fmt: skip

    _no_unexpected(job)
    assert _named(job, "not a valid Parquet file", "not a readable Parquet file"), job


def test_invalid_parquet_labels_are_named_too(binary_project, lead_client, django_capture_on_commit_callbacks):
    job = _import(
        lead_client, binary_project, "d.parquet", b"PAR1garbagePAR1", django_capture_on_commit_callbacks,
        kind="labels", format="auto",
    )  # fmt: skip

    _no_unexpected(job)
    assert _named(job, "not a valid Parquet file", "not a readable Parquet file"), job


def test_a_deeply_nested_json_array_is_named(binary_project, lead_client, django_capture_on_commit_callbacks):
    deep = b"[" + b'{"data": ' * 100_000 + b"1" + b"}" * 100_000 + b"]"

    job = _import(
        lead_client, binary_project, "ls.json", deep, django_capture_on_commit_callbacks, format="label-studio"
    )

    _no_unexpected(job)
    assert _named(job, "nested too deeply"), job


def test_a_deeply_nested_native_line_is_named_by_line(project, lead_client, django_capture_on_commit_callbacks):
    deep = b'{"id": "d", "prompt": "p", "responses": ["a", "b"], "metadata": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"

    job = _import(lead_client, project, "items.jsonl", deep + b"\n", django_capture_on_commit_callbacks)

    _no_unexpected(job)
    assert job["errors"][0]["line"] == 1
    assert "nested deeper" in job["errors"][0]["message"]
