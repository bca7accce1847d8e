"""The Python client against a real server (gunicorn, PostgreSQL, a Celery worker on Redis): every call it offers,
the job polling, the exports to a file and to a Dataset, and the server's errors as PenumbraError."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from penumbra_client import JobFailed, Penumbra, PenumbraError
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory, may_create_projects
from tests.formats.helpers import DATA
from tests.suggestions.fake_llm import start_fake_llm

# django_db makes pytest-django create the test database (the tests themselves only talk HTTP); the xdist group
# keeps the module on one worker under `make test`, so it starts one server.
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db,
    pytest.mark.xdist_group("client-live-server"),
]
WAIT_SECONDS = 60


@pytest.fixture(scope="module")
def client(penumbra_server, django_db_blocker) -> Iterator[Penumbra]:
    with django_db_blocker.unblock():
        lead = may_create_projects(UserFactory(username="client-lead"))
        UserFactory(username="client-annotator")
        token = Token.objects.create(user=lead).key
    with Penumbra(penumbra_server.url, token, poll_seconds=0.2) as penumbra:
        yield penumbra


def _eventually(read, done, what: str, penumbra_server):
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = read()
        if done(value):
            return value
        time.sleep(0.3)
    pytest.fail(f"{what} did not happen within {WAIT_SECONDS} s:\n{penumbra_server.logs()}")


def test_the_client_imports_no_django():
    code = "import sys, penumbra_client; print('django' in sys.modules, 'rest_framework' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_projects_and_members(client):
    project = client.create_project("Client: members", mode="binary", overlap=2)

    assert project.mode == "binary"
    assert project.role == "lead"
    assert project.raw["overlap"] == 2
    assert project.id in {p.id for p in client.projects()}
    assert client.project(project.id).name == "Client: members"
    assert client.add_member(project, "client-annotator") == {"username": "client-annotator", "role": "annotator"}
    assert {m["username"] for m in client.members(project)} == {"client-lead", "client-annotator"}
    assert client.update_project(project, overlap=3).raw["overlap"] == 3


def test_server_errors_arrive_with_status_and_message(client):
    project = client.create_project("Client: errors", mode="binary")

    with pytest.raises(PenumbraError) as unknown:
        client.add_member(project, "nobody-here")
    assert unknown.value.status == 400
    assert unknown.value.errors == {"username": ["No user with this name."]}
    assert "username: No user with this name." in str(unknown.value)

    with pytest.raises(PenumbraError) as missing:
        client.project(10**9)
    assert missing.value.status == 404

    with pytest.raises(PenumbraError) as refused:
        client.handoff(project)
    assert refused.value.status == 400
    assert "Handoff refused" in str(refused.value)


def test_imports_wait_for_their_jobs_and_report_failures_by_record(client, capsys):
    project = client.create_project("Client: Label Studio", mode="binary")

    items = client.import_items(project, DATA / "label_studio_pairwise.json", format="label-studio", progress=False)
    labels = client.import_labels(project, DATA / "label_studio_pairwise.json", format="label-studio", progress=True)

    assert (items.status, items.result["created"]) == ("done", 2)
    assert (labels.status, labels.result["created"]) == ("done", 3)
    bars = capsys.readouterr().err
    assert "import_labels" in bars  # the tqdm bar that was asked for
    assert "import_items" not in bars  # and none where progress=False
    assert sorted(item["external_id"] for item in client.items(project)) == ["11", "12"]
    assert {(a["item_external_id"], a["annotator"], a["binary_choice"]) for a in client.annotations(project)} == {
        ("11", "label-studio-1", 0),
        ("11", "label-studio-2", 1),
        ("12", "label-studio-1", 1),
    }
    with pytest.raises(JobFailed) as failed:
        client.import_items(project, DATA / "label_studio_bad.json", format="label-studio", on_duplicate="skip")
    assert failed.value.rows[0]["line"] == 3
    assert "task 3 (id 13): Label Studio task data has no pair of responses" in str(failed.value)
    assert len(list(client.items(project))) == 2


def test_stats_and_exports_after_the_worker_computed_them(client, penumbra_server, tmp_path):
    project = client.create_project("Client: exports", mode="binary")
    client.import_items(project, DATA / "hf_preferences.jsonl", format="hf")
    labels = client.import_labels(project, DATA / "hf_preferences.jsonl", format="hf", ratings_rule="binary")
    assert labels.result["notes"][0].startswith("Ratings of each response became binary labels")

    stats = _eventually(
        lambda: client.stats(project),
        lambda s: (s["progress"] or {}).get("labels_total") == 3,
        "the project figures",
        penumbra_server,
    )
    assert stats["computed_at"] is not None
    _eventually(
        lambda: client.export(project, tmp_path / "poll.jsonl").read_text().count("\n"),
        lambda n: n == 2,
        "the item aggregates",
        penumbra_server,
    )

    path = client.export(project, tmp_path / "dpo.jsonl", format="dpo")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    # The rated pairs (5 vs 1, 4.5 vs 2) export with the dataset's chosen answer chosen; the 4 vs 4 tie does not.
    assert {(r["prompt"], r["chosen"], r["rejected"]) for r in rows} == {
        ("How many legs does a spider have?", "Eight.", "Six, like all insects."),
        ("What does HTTP 404 mean?", "The server found no resource at that URL.", "The server crashed."),
    }
    dataset = client.export_dataset(project, format="dpo", cache_dir=tmp_path / "arrow")
    assert dataset.num_rows == 2
    # Built on disk and memory-mapped from the cache, not held in memory.
    assert all(Path(f["filename"]).is_relative_to(tmp_path / "arrow") for f in dataset.cache_files)
    assert {"prompt", "chosen", "rejected", "p_chosen", "provenance"} <= set(dataset.column_names)
    # A binary project's hesitation is null on every row, typed float by the card's features all the same.
    assert dataset["hesitation"] == [None, None]
    assert dataset.features["hesitation"].dtype == "float64"
    assert sorted(dataset["chosen"]) == sorted(r["chosen"] for r in rows)
    annotations = client.export_dataset(project, format="annotations")
    assert annotations.num_rows == 3

    with pytest.raises(PenumbraError) as bad_filter:
        client.export(project, tmp_path / "bad.jsonl", max_hesitation=3)
    assert bad_filter.value.status == 400
    assert "max_hesitation" in bad_filter.value.errors


def test_suggestions_are_generated_through_the_projects_llm(client):
    fake, server = start_fake_llm()
    try:
        project = client.create_project("Client: suggestions", mode="binary")
        client.import_items(project, DATA / "potato_data.jsonl", format="potato")
        client.update_project(project, llm_base_url=fake.base_url, llm_model="fake-model")

        job = client.generate_suggestions(project)

        assert job.status == "done"
        suggestions = list(client.suggestions(project))
        assert len(suggestions) == 3
        assert {(s["status"], s["model_name"], s["rationale"]) for s in suggestions} == {
            ("ok", "fake-model", "Clearer and correct.")  # the fake model's scripted answer
        }
        assert len(fake.requests) == 3
    finally:
        server.shutdown()
