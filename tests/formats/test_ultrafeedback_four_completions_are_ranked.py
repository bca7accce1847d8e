"""An UltraFeedback row of four completions (openbmb/UltraFeedback's columns) imports as one item of four responses
with their models, keeps the scores, critiques and reference answers from annotators, and is ranked on the page."""

from __future__ import annotations

import json

import pytest

from annotation.models import Annotation
from projects.imports.items import ImportRejected
from projects.models import Item, Membership, Project
from tests.annotation.conftest import item_url
from tests.factories import MembershipFactory, ProjectFactory
from tests.formats.helpers import DATA, import_items

pytestmark = pytest.mark.django_db

SOURCE = "real/hf_ultrafeedback_four_completions.jsonl"


def test_four_completions_become_four_responses_and_their_scores_stay_with_the_lead(annotator, annotator_client):
    project = ProjectFactory(mode=Project.Mode.BINARY, blind_rate=0)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    source = json.loads((DATA / SOURCE).read_text())

    assert import_items(project, "hf", SOURCE).created == 1

    item = Item.objects.get(project=project)
    responses = list(item.responses.order_by("position"))
    assert [(r.text, r.model_name) for r in responses] == [(c["response"], c["model"]) for c in source["completions"]]
    assert item.prompt == source["instruction"]
    assert item.metadata == {}
    assert item.lead_metadata["correct_answers"] == ["23", "29"]
    assert [c["overall_score"] for c in item.lead_metadata["completions"]] == [9.0, 8.0, 2.0, 1.0]
    assert all("response" not in c for c in item.lead_metadata["completions"])

    html = annotator_client.get(item_url(project, item)).content.decode()
    assert 'id="ranking-input"' in html
    assert "overall_score" not in html
    assert "divisible by 3" not in html  # a critique
    annotator_client.post(item_url(project, item), {"ranking": "0,1,2,3", "client_token": "uf"})
    assert Annotation.objects.get(item=item).ranking == [0, 1, 2, 3]


def test_a_row_with_one_completion_is_named(tmp_path):
    project = ProjectFactory(mode=Project.Mode.BINARY)
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"instruction": "Hi", "completions": [{"model": "m", "response": "Hello"}]}) + "\n")
    with pytest.raises(ImportRejected, match="completions must be a list of at least 2 completions"):
        import_items(project, "hf", str(path))
    assert not Item.objects.filter(project=project).exists()
