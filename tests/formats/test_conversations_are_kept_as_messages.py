"""A conversational prompt stays a conversation from import to export: an HF conversational TRL file and an Anthropic
HH multi-turn file keep their messages on the item (with the flattened text beside them), the annotator's page shows
them as a chat (roles in words, the system prompt folded, the same safe markdown), the dpo export gives TRL's
conversational shape back and `datasets` reads it as messages, and the database refuses a malformed conversation."""

from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from aggregation.exports.stream import ExportOptions, export_lines
from projects.imports.items import ImportRejected
from projects.models import Item, Project
from tests.annotation.conftest import item_url
from tests.exports.builders import aggregate_item, label_ifs
from tests.factories import ItemFactory, ProjectFactory
from tests.formats.helpers import DATA, import_items

pytestmark = pytest.mark.django_db

SOURCE = "real/hf_trl_conversational_multiturn.jsonl"


def _source_rows() -> dict[str, dict]:
    rows = (json.loads(line) for line in (DATA / SOURCE).read_text().splitlines())
    return {row["id"]: row for row in rows}


def test_hf_conversational_prompt_is_stored_as_messages_with_its_text_beside():
    project = ProjectFactory(mode=Project.Mode.IFS)
    result = import_items(project, "hf", SOURCE)

    assert result.created == 2
    item = Item.objects.get(project=project, external_id="chat-1")
    assert item.prompt_messages == _source_rows()["chat-1"]["prompt"]
    assert [m["role"] for m in item.prompt_messages] == ["system", "user", "assistant", "user"]
    assert item.prompt_messages[1]["name"] == "ada"
    # The flattened text stays for the paths that read text (the LLM's prompt, CSV, search).
    assert item.prompt.startswith("**system:** You are a careful assistant.")
    assert item.prompt.endswith("**user:** And in place, without a copy?")
    # Each response is the next assistant turn, its text without a role marker.
    assert sorted(r.text for r in item.responses.all())[0].startswith("Call `xs.reverse()`")
    single = Item.objects.get(project=project, external_id="chat-2")
    assert single.prompt == "What is 2^10?"
    assert single.prompt_messages == [{"role": "user", "content": "What is 2^10?"}]


def test_anthropic_hh_dialogue_becomes_turns():
    project = ProjectFactory(mode=Project.Mode.BINARY)
    import_items(project, "hf", "real/hf_hh_implicit_prompt.jsonl")

    burn = Item.objects.get(project=project, prompt__contains="burn")
    assert burn.prompt_messages == [
        {"role": "user", "content": "What can I put on a burn?"},
        {"role": "assistant", "content": "Cool running water for twenty minutes, then a clean non-stick dressing."},
        {"role": "user", "content": "Not butter?"},
    ]
    assert all("Human:" not in m["content"] and "Assistant:" not in m["content"] for m in burn.prompt_messages)


def test_a_text_prompt_has_no_messages():
    project = ProjectFactory(mode=Project.Mode.IFS)
    import_items(project, "hf", "real/hf_trl_documented_shapes.jsonl")

    standard = Item.objects.filter(project=project, prompt="The sky is")
    assert standard.count() == 2
    assert all(item.prompt_messages is None for item in standard)


def test_a_message_with_an_unknown_role_refuses_the_file_and_names_it(tmp_path):
    project = ProjectFactory(mode=Project.Mode.IFS)
    bad = {"prompt": [{"role": "moderator", "content": "Hi"}], "chosen": "a", "rejected": "b"}
    with pytest.raises(ImportRejected, match=r"prompt\[0\]\.role must be one of system, user, assistant, tool"):
        import_items(project, "hf", _write(tmp_path, [bad]))
    assert not Item.objects.filter(project=project).exists()


def _write(tmp_path, rows: list[dict]) -> str:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def test_the_page_shows_the_conversation_as_a_chat(project, annotator_client):
    messages = [
        {"role": "system", "content": "Be brief. <script>alert(1)</script>"},
        {"role": "user", "content": "What is **2 + 2**?", "name": "ada"},
        {"role": "assistant", "content": "Four."},
        {"role": "user", "content": "And times 3?"},
    ]
    item = ItemFactory(project=project, is_blind=False, prompt="flattened", prompt_messages=messages)
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()

    html = annotator_client.get(item_url(project, item)).content.decode()

    assert 'id="prompt-title">Conversation</h2>' in html
    assert '<li class="turn turn-system"><details><summary>System prompt</summary>' in html
    ada = '<div class="turn-role">User · ada</div><div class="md" dir="auto"><p>What is <strong>2 + 2</strong>?</p>'
    assert ada in html
    assert '<div class="turn-role">Assistant</div>' in html
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "flattened" not in html


def test_long_earlier_turns_are_folded_and_the_last_is_open(project, annotator_client):
    long_turn = "A long earlier answer. " * 60
    messages = [
        {"role": "user", "content": "Tell me a lot."},
        {"role": "assistant", "content": long_turn},
        {"role": "user", "content": long_turn},
    ]
    item = ItemFactory(project=project, is_blind=False, prompt="x", prompt_messages=messages)
    Item.objects.exclude(pk=item.pk).filter(project=project).delete()

    html = annotator_client.get(item_url(project, item)).content.decode()

    assert html.count('<li class="turn turn-assistant"><details><summary>') == 1
    assert '<li class="turn turn-user"><div class="turn-role">User</div>' in html
    assert html.count("<li class=") == 3


def test_the_dpo_export_gives_trl_conversational_shape_back_and_datasets_reads_messages(
    project, annotator, annotator2, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets")
    Item.objects.filter(project=project).delete()
    import_items(project, "hf", SOURCE, trl_chosen_as="none")
    for item in Item.objects.filter(project=project):
        chosen = next(r.position for r in item.responses.all() if r.text.startswith(("Call", "$2")))
        values = [(800, 100) if position == chosen else (100, 800) for position in (0, 1)]
        for person in (annotator, annotator2):
            label_ifs(item=item, annotator=person, values=values)
        aggregate_item(item=item, scores=[(v[0] / 1000, v[1] / 1000) for v in values])

    lines = [json.loads(line) for line in export_lines(project=project, options=ExportOptions(format="dpo"))]

    source = _source_rows()
    assert {line["id"] for line in lines} == {"chat-1", "chat-2"}
    for line in lines:
        # TRL's keys only: a name on some messages would make `datasets` type the column as untyped JSON.
        assert line["prompt"] == [{"role": m["role"], "content": m["content"]} for m in source[line["id"]]["prompt"]]
        assert line["chosen"] == source[line["id"]]["chosen"]
        assert line["rejected"] == source[line["id"]]["rejected"]
    path = tmp_path / "dpo.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    loaded = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    # Lists of {"role", "content"} (and "name" where the source had one): TRL's conversational features.
    assert loaded.features["chosen"].feature["role"].dtype == "string"
    assert set(loaded.features["prompt"].feature) == {"role", "content"}
    assert loaded[0]["chosen"][0]["role"] == "assistant"


@pytest.mark.parametrize("bad", [{"role": "user", "content": "an object"}, [], "a text"])
def test_the_database_refuses_a_conversation_that_is_not_a_list_of_messages(bad):
    item = ItemFactory(project=ProjectFactory())
    with pytest.raises(IntegrityError), transaction.atomic():
        Item.objects.filter(pk=item.pk).update(prompt_messages=bad)


def test_the_leads_item_review_shows_the_same_chat(project, lead_client):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why is the sky blue?"}]
    item = ItemFactory(project=project, prompt="flattened", prompt_messages=messages)

    html = lead_client.get(reverse("item_review", kwargs={"project_id": project.pk, "item_id": item.pk})).content
    page = html.decode()

    assert '<li class="turn turn-system"><details><summary>System prompt</summary>' in page
    assert '<div class="turn-role">User</div><div class="md" dir="auto"><p>Why is the sky blue?</p>' in page
