"""Writes of LLM suggestions: generated through an OpenAI-compatible endpoint, or the "longest-response" baseline.

Imported suggestions are written by the item import; nothing here changes them unless a lead asks to overwrite.
A generation that fails is stored as a FAILED suggestion with its reason: it is never shown, compared or handed
off, and the next run tries it again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

import httpx
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from projects.jobs import job_enqueue_on_commit
from projects.llm_url import LLMURLRefused, check_llm_base_url
from projects.models import TIE, Item, Job, Project, Response, Suggestion, SuggestionValue
from suggestions import llm

logger = logging.getLogger(__name__)

BASELINE_MODEL_NAME = "longest-response"


def check_llm_configured(*, project: Project) -> llm.LLMConfig:
    config = llm.llm_config_for(project)
    if not config.is_configured:
        raise ValidationError(
            {
                "llm_base_url": "No LLM endpoint is configured: set the project's base URL and model "
                "(or LLM_BASE_URL and LLM_MODEL in the environment)."
            }
        )
    try:
        # Again at run time: the URL may come from the environment, and a name may resolve elsewhere by now.
        check_llm_base_url(config.base_url, allow_private=settings.LLM_ALLOW_PRIVATE_URLS)
    except LLMURLRefused as refused:
        raise ValidationError({"llm_base_url": str(refused)}) from None
    return config


def _items_to_suggest(*, project: Project, item_ids: Sequence[int] | None, overwrite: bool) -> list[Item]:
    items = Item.objects.filter(project=project)
    if item_ids is not None:
        items = items.filter(pk__in=list(item_ids))
    if not overwrite:
        items = items.exclude(suggestion__status=Suggestion.Status.OK)
    return list(items.prefetch_related("responses").order_by("queue_key", "id"))


@transaction.atomic
def suggestion_store(*, item: Item, outcome: llm.SuggestionOutcome, model_name: str) -> Suggestion:
    """Write one generation result (ok with its values, or failed with its reason), replacing what was there."""
    responses = sorted(item.responses.all(), key=lambda r: r.position)
    answer = outcome.answer
    defaults = {
        "status": Suggestion.Status.OK if answer else Suggestion.Status.FAILED,
        "preferred_position": answer.preferred_position if answer else None,
        "rationale": answer.rationale if answer else "",
        "model_name": model_name,
        "source": Suggestion.Source.GENERATED,
        "failure_reason": "" if answer else outcome.failure_reason,
        "attempts": max(1, outcome.attempts),
    }
    suggestion, _ = Suggestion.objects.update_or_create(item=item, defaults=defaults)
    SuggestionValue.objects.filter(suggestion=suggestion).delete()
    if answer and answer.values:
        SuggestionValue.objects.bulk_create(
            SuggestionValue(suggestion=suggestion, response=response, mu=mu, nu=nu)
            for response, (mu, nu) in zip(responses, answer.values, strict=True)
        )
    return suggestion


def suggestions_generate(
    *,
    project: Project,
    item_ids: Sequence[int] | None,
    progress: Callable[..., None] | None = None,
    overwrite: bool = False,
) -> dict[str, int]:
    """Ask the project's endpoint for a suggestion per item (items with an ok suggestion are skipped unless
    ``overwrite``), at most LLM_CONCURRENCY requests at a time, storing each result as it arrives.

    Not one transaction: each item is stored on its own, so progress is visible and a stopped run keeps its work.
    Returns counts {"ok", "failed", "skipped"}.
    """
    config = check_llm_configured(project=project)
    items = _items_to_suggest(project=project, item_ids=item_ids, overwrite=overwrite)
    wanted = len(item_ids) if item_ids is not None else Item.objects.filter(project=project).count()
    counts = {"ok": 0, "failed": 0, "skipped": max(0, wanted - len(items))}
    report = progress or (lambda done, total=None: None)
    report(0, len(items))
    criteria = [c.name for c in project.criteria.all()] or ["overall quality"]
    by_id = {item.pk: item for item in items}
    requests = [
        llm.ItemRequest(
            item_id=item.pk,
            prompt=item.prompt,
            responses=[r.text for r in sorted(item.responses.all(), key=lambda r: r.position)],
            criteria=criteria,
        )
        for item in items
    ]
    done = 0
    limits = httpx.Limits(max_connections=config.concurrency, max_keepalive_connections=config.concurrency)
    # Threads only talk HTTP; every database write happens here, in the calling thread, as answers arrive.
    with httpx.Client(limits=limits) as client, ThreadPoolExecutor(max_workers=config.concurrency) as pool:
        futures = [pool.submit(llm.suggest_one, client, config, request) for request in requests]
        try:
            for future in as_completed(futures):
                outcome = future.result()
                suggestion_store(item=by_id[outcome.item_id], outcome=outcome, model_name=config.model)
                counts["ok" if outcome.ok else "failed"] += 1
                done += 1
                report(done)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return counts


@transaction.atomic
def suggestion_job_start(
    *, project: Project, user: User | None, item_ids: Sequence[int] | None = None, overwrite: bool = False
) -> Job:
    """Create a suggestion Job and enqueue it once this transaction commits."""
    check_llm_configured(project=project)
    if item_ids is not None:
        ids = sorted({int(i) for i in item_ids})
        found = Item.objects.filter(project=project, pk__in=ids).count()
        if found != len(ids):
            raise ValidationError({"item_ids": "Some items are not in this project."})
        item_ids = ids
    job = Job.objects.create(
        project=project,
        kind=Job.Kind.SUGGEST,
        created_by=user,
        options={"item_ids": item_ids, "overwrite": overwrite},
    )
    job_enqueue_on_commit(job)
    return job


def _longest(responses: Sequence[Response]) -> tuple[int, str]:
    ranked = sorted(responses, key=lambda r: (-len(r.text), r.position))
    first, second = ranked[0], ranked[1]
    if len(first.text) == len(second.text):
        return TIE, (
            f"Responses {first.position + 1} and {second.position + 1} are equally long ({len(first.text)} characters)."
        )
    return first.position, (
        f"Response {first.position + 1} is the longest ({len(first.text)} characters against {len(second.text)}). "
        "This baseline only measures length."
    )


@transaction.atomic
def longest_response_suggestions(*, project: Project) -> int:
    """The honest weak baseline: prefer the longer response (a tie on equal length) for every item that has no
    usable suggestion yet. Existing ok suggestions (imported or generated) are kept. Returns how many were written.
    """
    items = list(
        Item.objects.filter(project=project)
        .exclude(suggestion__status=Suggestion.Status.OK)
        .prefetch_related("responses")
        .order_by("id")
    )
    writable = [item for item in items if len(item.responses.all()) >= 2]
    # A failed generation left a row behind; the baseline takes its place.
    Suggestion.objects.filter(item__in=writable).delete()
    suggestions = []
    for item in writable:
        preferred, rationale = _longest(list(item.responses.all()))
        suggestions.append(
            Suggestion(
                item=item,
                status=Suggestion.Status.OK,
                preferred_position=preferred,
                rationale=rationale,
                model_name=BASELINE_MODEL_NAME,
                source=Suggestion.Source.BASELINE,
            )
        )
    Suggestion.objects.bulk_create(suggestions, batch_size=2000)
    return len(suggestions)
