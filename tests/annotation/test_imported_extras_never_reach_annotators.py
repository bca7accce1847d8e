"""Of everything an import brings, annotators receive the prompt and the responses' texts only.

Every other field of the imported rows carries a unique marker: metadata and its gold-related keys, lead-only
metadata, the responses' model names, a Hugging Face dataset's extra columns, the suggestion's rationale and model on
blind items, and the names of imported annotators. The markers must never appear in anything an annotator or a
study participant is sent (home, arrival and end pages, the annotation page and its htmx fragments before and after a
save, the item and annotation API),
and each must appear for the lead through the item API, so an empty or broken page cannot pass.
"""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.services import study_link_create
from annotation.imports.labels import labels_import
from projects.imports.formats import items_import_formatted
from projects.imports.items import items_import
from projects.models import Item, Project
from tests.annotation.conftest import ifs_form, item_url, next_url
from tests.annotation.study_helpers import enter_url

MARK = "MRK7Q"
NATIVE_MARKERS = {
    "metadata": f"{MARK}-meta",
    "gold metadata": f"{MARK}-expert",
    "lead metadata": f"{MARK}-lead",
    "model name": f"{MARK}-model",
    "suggestion rationale": f"{MARK}-rationale",
    "suggestion model": f"{MARK}-sugmodel",
}
HF_MARKER = f"{MARK}-hfcolumn"
ANNOTATOR_MARKER = f"{MARK}-annotator"


def _native(n: int) -> str:
    return json.dumps(
        {
            "id": f"mark-{n}",
            "prompt": f"Marked question {n}?",
            "responses": [
                {"text": f"Marked answer A{n}", "model": f"{NATIVE_MARKERS['model name']}-{n}"},
                f"Marked answer B{n}",
            ],
            "gold": 0,
            "metadata": {"topic": f"{NATIVE_MARKERS['metadata']}-{n}",
                         "expert_note": f"{NATIVE_MARKERS['gold metadata']}-{n}"},
            "lead_metadata": {"note": f"{NATIVE_MARKERS['lead metadata']}-{n}"},
            "suggestion": {"preferred": 1, "rationale": f"{NATIVE_MARKERS['suggestion rationale']}-{n}",
                           "model": f"{NATIVE_MARKERS['suggestion model']}-{n}"},
        }
    )  # fmt: skip


def _hf(n: int) -> str:
    return json.dumps(
        {"prompt": f"HF question {n}?", "chosen": f"HF chosen {n}", "rejected": f"HF rejected {n}",
         "origin_note": f"{HF_MARKER}-{n}"}
    )  # fmt: skip


@pytest.fixture
def marked(project: Project) -> list[Item]:
    """Only marked items, all blind (their suggestions must stay hidden), each labelled by an imported annotator."""
    Item.objects.filter(project=project).delete()
    items_import(project=project, lines=[_native(n) for n in range(3)])
    hf = "\n".join(_hf(n) for n in range(2)).encode()
    items_import_formatted(project=project, fmt="hf", handle=io.BytesIO(hf))
    Item.objects.filter(project=project).update(is_blind=True)
    items = list(Item.objects.filter(project=project).order_by("pk"))
    labels_import(
        project=project,
        lines=[
            json.dumps({"item": item.external_id, "annotator": f"{ANNOTATOR_MARKER}-{n}", "mode": "ifs",
                        "values": [{"position": 0, "mu": 0.5, "nu": 0.1}, {"position": 1, "mu": 0.1, "nu": 0.5}]})
            for n, item in enumerate(items)
        ],
    )  # fmt: skip
    return items


def _api(client, project, items) -> list[str]:
    bodies = [client.get(f"/api/projects/{project.pk}/items/").content.decode()]
    bodies += [client.get(f"/api/projects/{project.pk}/items/{item.pk}/").content.decode() for item in items]
    bodies.append(client.get(f"/api/projects/{project.pk}/annotations/").content.decode())
    return bodies


def _annotator_channels(client, project, items) -> str:
    htmx = {"HTTP_HX_REQUEST": "true"}
    bodies = [client.get(reverse("home")).content.decode(), client.get(next_url(project), follow=True).content.decode()]
    for item in items:
        url = item_url(project, item)
        bodies.append(client.get(url).content.decode())
        bodies.append(client.get(url, **htmx).content.decode())
        bodies.append(client.post(url, ifs_form(item), follow=True).content.decode())
        bodies.append(client.post(url, ifs_form(item), **htmx).content.decode())
    bodies += _api(client, project, items)
    return "\n".join(bodies)


def test_annotators_get_the_prompt_and_responses_and_nothing_else(project, marked, annotator_client, lead_client):
    seen = _annotator_channels(annotator_client, project, marked)
    lead_seen = "\n".join(_api(lead_client, project, marked))

    # The walk reached every item: their prompts and answers are there.
    for item in marked:
        assert item.prompt in seen
        assert item.responses.get(position=0).text in seen
    assert MARK not in seen, seen[max(0, seen.find(MARK) - 300) : seen.find(MARK) + 100]
    # Control: every marker is findable, for the lead.
    for n in range(3):
        for marker in NATIVE_MARKERS.values():
            assert f"{marker}-{n}" in lead_seen
    for n in range(2):
        assert f"{HF_MARKER}-{n}" in lead_seen
    assert f"{ANNOTATOR_MARKER}-0" in lead_client.get(reverse("import_page", args=[project.pk])).content.decode()


def test_a_study_participant_gets_the_prompt_and_responses_only(project, marked, lead):
    """A crowd participant walks the same channels, from arrival by link to the end page."""
    link = study_link_create(project=project, created_by=lead, name="Crowd")
    client = Client()
    arrival = client.get(enter_url(link, "pid-marker"), follow=True)
    assert arrival.status_code == 200

    walked = _annotator_channels(client, project, marked)
    end = client.get(reverse("study_end", kwargs={"token": link.token}), follow=True).content.decode()
    seen = "\n".join([arrival.content.decode(), walked, end])

    assert any(item.prompt in seen for item in marked)  # the participant was served marked items
    assert MARK not in seen, seen[max(0, seen.find(MARK) - 300) : seen.find(MARK) + 100]
