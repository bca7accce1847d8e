"""The ``rankings`` export: one line per ranked label (binary items of three responses or more, ranked on the page),
with the responses in the annotator's order, best first, and every pair that order implies (chosen over rejected).

A ranking of k responses implies k(k − 1)/2 preferences; ``pairs`` lists them all, so a DPO trainer can take them
as they are (TRL's ``chosen``/``rejected``), and ``ranking`` keeps the list for listwise losses. The prompt is a text,
or TRL's messages when the item is a conversation (and then each answer is one assistant message). Keyset pages of
annotations, like the raw ``annotations`` export; access is checked by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import combinations
from typing import Any

from django.db.models.functions import Coalesce

from annotation.models import Annotation
from projects import conversation
from projects.models import Item, Project, Response

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def ranking_lines(project: Project, chunk_size: int) -> Iterator[tuple[int, list[str]]]:
    rows = (
        Annotation.objects.filter(project=project, ranking__isnull=False)
        .annotate(annotator_name=Coalesce("annotator__imported_identity__external_id", "annotator__username"))
        .order_by("id")
        .values_list(
            "id", "item_id", "item__external_id", "item__prompt", "item__prompt_messages", "annotator_name", "ranking"
        )
    )
    # In a project that holds conversations every prompt is messages, so each column keeps one type.
    conversational = Item.objects.filter(project=project, prompt_messages__isnull=False).exists()
    last = 0
    while True:
        page = list(rows.filter(id__gt=last)[:chunk_size])
        if not page:
            return
        last = page[-1][0]
        texts: dict[int, dict[int, tuple[str, str]]] = {}
        for item_id, position, text, model in Response.objects.filter(item_id__in={row[1] for row in page}).values_list(
            "item_id", "position", "text", "model_name"
        ):
            texts.setdefault(item_id, {})[position] = (text, model)
        for annotation_id, item_id, external_id, prompt, messages, annotator, ranking in page:
            if messages is None and conversational:
                messages = [{"role": "user", "content": prompt}]
            yield annotation_id, [_line(ranking, texts[item_id], external_id, prompt, messages, annotator)]


def _line(
    ranking: Any,  # list[int]: the query filters on a stored ranking
    texts: dict[int, tuple[str, str]],
    external_id: str,
    prompt: str,
    messages: list[dict[str, str]] | None,
    annotator: str,
) -> str:
    def answer(position: int) -> Any:
        text = texts[position][0]
        return text if messages is None else conversation.assistant_turn(text)

    row = {
        "id": external_id,
        "annotator": annotator,
        "prompt": prompt if messages is None else conversation.trl_messages(messages),
        "ranking": ranking,
        "responses": [texts[p][0] for p in ranking],  # the texts; the pairs carry TRL's shape
        "models": [texts[p][1] for p in ranking],
        "pairs": [
            {"chosen": answer(a), "rejected": answer(b), "chosen_position": a, "rejected_position": b}
            for a, b in combinations(ranking, 2)
        ],
    }
    return _ENCODER.encode(row) + "\n"
