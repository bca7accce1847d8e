"""The ``kto`` export: unpaired desirability data in TRL's KTO shape (``prompt``, ``completion``, ``label``), derived
from per-response judgments rather than from pairs.

Which responses are labelled, per aggregated item:
- IFS: every response with an aggregated overall score S = μ − ν outside the project's tie band (|S| ≥
  tie_tolerance / 2): desirable when S > 0, undesirable when S < 0. Two weak answers are both undesirable even when
  their pair is a tie, which a DPO export cannot say.
- Binary: when more than half of the item's labels are "both bad", every response is undesirable; otherwise the
  preferred response (the item's best, unless a tie) is desirable and the others are left out (not choosing an
  answer does not make it bad).
Likert labels say nothing per response and give no rows. The prompt is a text, or TRL's messages when the item is a
conversation (the completion is then one assistant message). Access is checked by the caller.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from aggregation.models import ItemAggregate, ResponseAggregate
from annotation.models import Annotation
from projects import conversation
from projects.models import TIE, Item, Project, Response

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def kto_lines(
    project: Project, aggregates: QuerySet[ItemAggregate], chunk_size: int
) -> Iterator[tuple[int, list[str]]]:
    rows = aggregates.order_by("item_id").values_list("item_id", "best_position", "n_annotators")
    band = project.tie_tolerance / 2
    # In a project that holds conversations every prompt is messages, so each column keeps one type.
    conversational = Item.objects.filter(project=project, prompt_messages__isnull=False).exists()
    last = 0
    while True:
        page = list(rows.filter(item_id__gt=last)[:chunk_size])
        if not page:
            return
        last = page[-1][0]
        item_ids = [row[0] for row in page]
        found = Item.objects.filter(pk__in=item_ids).values_list("pk", "external_id", "prompt", "prompt_messages")
        items = {pk: (ext, prompt, _messages(prompt, messages, conversational)) for pk, ext, prompt, messages in found}
        responses: dict[int, dict[int, tuple[int, str]]] = {}
        for pk, item_id, position, text in Response.objects.filter(item_id__in=item_ids).values_list(
            "pk", "item_id", "position", "text"
        ):
            responses.setdefault(item_id, {})[position] = (pk, text)
        scores = {
            response_id: mu - nu
            for response_id, mu, nu in ResponseAggregate.objects.filter(
                item_id__in=item_ids, criterion__isnull=True, operator=project.aggregation_operator
            ).values_list("response_id", "mu", "nu")
        }
        votes: dict[int, Counter[bool]] = {}
        for item_id, both_bad in Annotation.objects.filter(item_id__in=item_ids, mode="binary").values_list(
            "item_id", "both_bad"
        ):
            votes.setdefault(item_id, Counter())[both_bad] += 1
        for item_id, best, n_annotators in page:
            external_id, prompt, messages = items[item_id]
            labelled = _labels(responses.get(item_id, {}), scores, votes.get(item_id), best, band)
            yield (
                item_id,
                [
                    _line(external_id, prompt, messages, text, position, label, score, source, n_annotators)
                    for position, text, label, score, source in labelled
                ],
            )


def _labels(
    responses: dict[int, tuple[int, str]],
    scores: dict[int, float],
    votes: Counter[bool] | None,
    best: int | None,
    band: float,
) -> list[tuple[int, str, bool, float | None, str]]:
    """(position, text, label, score, source) for the responses this item labels (see the module docstring)."""
    out: list[tuple[int, str, bool, float | None, str]] = []
    if votes is not None:
        if votes[True] * 2 > sum(votes.values()):
            return [(p, text, False, None, "both_bad") for p, (_, text) in sorted(responses.items())]
        if best is not None and best != TIE and best in responses:
            return [(best, responses[best][1], True, None, "choice")]
        return []
    for position, (pk, text) in sorted(responses.items()):
        score = scores.get(pk)
        if score is not None and abs(score) >= band and score != 0:
            out.append((position, text, score > 0, round(score, 6), "sliders"))
    return out


def _messages(prompt: str, messages: list[dict[str, str]] | None, conversational: bool) -> list[dict[str, str]] | None:
    if messages is None and conversational:
        return [{"role": "user", "content": prompt}]
    return messages


def _line(
    external_id: str,
    prompt: str,
    messages: list[dict[str, str]] | None,
    text: str,
    position: int,
    label: bool,
    score: float | None,
    source: str,
    n_annotators: int,
) -> str:
    row: dict[str, Any] = {
        "prompt": prompt if messages is None else conversation.trl_messages(messages),
        "completion": text if messages is None else conversation.assistant_turn(text),
        "label": label,
        "id": f"{external_id}#{position}",
        "position": position,
        "score": score,
        "source": source,
        "n_annotators": n_annotators,
    }
    return _ENCODER.encode(row) + "\n"
