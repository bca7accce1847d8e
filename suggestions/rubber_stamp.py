"""Rubber-stamp signals per annotator: how readily each person takes the model's answer when it is on screen.

Agreement cannot reveal rubber-stamping: a person who accepts every suggestion agrees perfectly with the model, and
their labels look like the best in the project. These signals look at behaviour instead:

* **Accept rate**: labels saved with the Accept button, of the labels they gave with a suggestion on screen;
* **keep rate**: of their verification answers (the model's answer pre-filled, keep or change), the share where
  they kept the model's answer (the after-label resolution step's "keep" keeps the person's own label, the other
  way round, so it is reported for the project on its own, not here);
* **fast accepts**: the share of their Accepts clicked sooner than the time needed to read the item's text (prompt
  and responses). Reading speed assumption: 238 words a minute, the average silent reading rate of adults for English
  non-fiction in Brysbaert's 2019 meta-analysis; an Accept faster than that was given without reading everything.
  The time to Accept is the page's visible clock at the click (recorded with the Accept, the last one before the
  save); labels saved before that was recorded fall back to the label's whole time on the item.

A person is flagged when at least ``MINIMUM_ACCEPTS`` Accepts exist and more than ``FAST_SHARE_FLAG`` of them were
fast. The flag is a prompt to look, not a verdict: a person who knows the items (a second pass) reads faster.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotation.models import Annotation, LabelRequest, SuggestionExposure
from projects.models import Item, Project, Response

WORDS_PER_MINUTE = 238.0
MINIMUM_ACCEPTS = 5
FAST_SHARE_FLAG = 0.5


def reading_time_ms(words: int) -> float:
    """Milliseconds needed to read ``words`` words at WORDS_PER_MINUTE."""
    return words / WORDS_PER_MINUTE * 60_000.0


def _words_per_item(item_ids: set[int]) -> dict[int, int]:
    words: dict[int, int] = defaultdict(int)
    for item_id, prompt in Item.objects.filter(pk__in=item_ids).values_list("pk", "prompt"):
        words[item_id] += len(prompt.split())
    for item_id, text in Response.objects.filter(item_id__in=item_ids).values_list("item_id", "text"):
        words[item_id] += len(text.split())
    return words


def rubber_stamp_signals(*, project: Project) -> list[dict[str, Any]]:
    """One row per annotator with labels given with a suggestion on screen, or keep/change answers (docstring)."""
    rows = list(
        Annotation.objects.filter(project=project, suggestion_shown=True).values_list(
            "annotator_id", "annotator__username", "item_id", "accepted_suggestion", "time_spent_ms"
        )
    )
    words = _words_per_item({item_id for _, _, item_id, accepted, _ in rows if accepted})
    to_accept: dict[tuple[int, int], int] = {}
    for user_id, item_id, clock in (
        SuggestionExposure.objects.filter(
            project=project, kind=SuggestionExposure.Kind.ACCEPT, time_on_item_ms__isnull=False
        )
        .order_by("created_at", "pk")
        .values_list("annotator_id", "item_id", "time_on_item_ms")
    ):
        if clock is not None:  # the latest Accept wins: the stored label is the one saved after it
            to_accept[(user_id, item_id)] = clock
    people: dict[int, dict[str, Any]] = {}

    def person(user_id: int, name: str) -> dict[str, Any]:
        return people.setdefault(
            user_id,
            {"annotator": name, "shown": 0, "accepts": 0, "fast_accepts": 0, "kept": 0, "keep_answers": 0},
        )

    for user_id, name, item_id, accepted, time_ms in rows:
        row = person(user_id, name)
        row["shown"] += 1
        if accepted:
            row["accepts"] += 1
            clock = to_accept.get((user_id, item_id), time_ms)
            row["fast_accepts"] += int(clock < reading_time_ms(words.get(item_id, 0)))
    for user_id, name, machine, final in LabelRequest.objects.filter(
        project=project, kind=LabelRequest.Kind.VERIFICATION, status=LabelRequest.Status.ANSWERED
    ).values_list("annotator_id", "annotator__username", "machine_preferred", "final_preferred"):
        row = person(user_id, name)
        row["keep_answers"] += 1
        row["kept"] += int(machine == final)
    out = []
    for row in sorted(people.values(), key=lambda r: r["annotator"]):
        accepts = row["accepts"]
        fast_share = row["fast_accepts"] / accepts if accepts else None
        out.append(
            {
                **row,
                "accept_rate": accepts / row["shown"] if row["shown"] else None,
                "keep_rate": row["kept"] / row["keep_answers"] if row["keep_answers"] else None,
                "fast_accept_share": fast_share,
                "flagged": accepts >= MINIMUM_ACCEPTS and fast_share is not None and fast_share > FAST_SHARE_FLAG,
            }
        )
    return out


__all__ = ["FAST_SHARE_FLAG", "MINIMUM_ACCEPTS", "WORDS_PER_MINUTE", "reading_time_ms", "rubber_stamp_signals"]
