"""Answering an unannounced repeat: the second judgment goes to the Repeat row, never to the annotation.

The page posts a repeat like any item (nothing on it says repeat), so the page's save asks
:func:`judgment_save_and_claim_next`, which sends the post to :func:`repeat_answer` while the person has the item's
repeat open and to ``annotation.services.annotation_save_and_claim_next`` otherwise.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation import services
from annotation.checks import check_judgment, check_skip_reason
from annotation.method_study import selectors as crossover_selectors
from annotation.models import Annotation, Assignment, Repeat, RepeatValue
from annotation.queue.services import assignment_claim_next
from annotation.saving import MAX_TIME_PER_SAVE_MS, SaveRequest
from annotation.selectors import repeat_open_for
from projects.models import Item, Project
from projects.selectors import item_responses, project_criteria

# The repeat's time counts like a save's: never more than the ceiling the save applies.
_MAX_TIME_MS = MAX_TIME_PER_SAVE_MS


# No savepoint inside the page's save (a refused answer rolls the whole block back); its own transaction otherwise.
@transaction.atomic(savepoint=False)
def repeat_answer(
    *,
    project: Project,
    item: Item,
    annotator: AbstractBaseUser,
    save: SaveRequest,
) -> Repeat | None:
    """Store the repeat judgment of ``item`` by ``annotator``; None when they have no open repeat of it (then
    nothing is written). Validated exactly as a save is (``check_judgment``); a refused one raises the same
    ValidationError. The save's other fields (token, Accept, reason) have no meaning for a repeat."""
    repeat = (
        Repeat.objects.select_for_update()
        .filter(project=project, item=item, annotator_id=annotator.pk, answered_at__isnull=True)
        .first()
    )
    if repeat is None:
        return None
    # In a method study the repeat is judged with the method of the person's original cell, as the page showed it.
    project = crossover_selectors.project_as_assigned(project=project, item=item, annotator=annotator)
    cleaned, choice, point = check_judgment(
        project=project,
        responses=item_responses(item),
        criteria=project_criteria(project),
        values=save.values,
        binary_choice=save.binary_choice,
        likert_value=save.likert_value,
    )
    by_position = {response.position: response for response in item_responses(item)}
    by_name = {criterion.name: criterion for criterion in project_criteria(project)}
    RepeatValue.objects.bulk_create(
        [
            RepeatValue(repeat=repeat, response=by_position[p], criterion=by_name[n], mu=mu, nu=nu)
            for (p, n), (mu, nu) in sorted(cleaned.items())
        ]
    )
    repeat.binary_choice = choice
    repeat.likert_value = point
    spent = (
        save.time_spent_ms if isinstance(save.time_spent_ms, int) and not isinstance(save.time_spent_ms, bool) else 0
    )
    repeat.time_spent_ms = max(0, min(spent, _MAX_TIME_MS))
    repeat.answered_at = timezone.now()
    repeat.save(update_fields=["binary_choice", "likert_value", "time_spent_ms", "answered_at"])
    return repeat


@transaction.atomic
def repeat_skip(*, project: Project, item: Item, annotator: AbstractBaseUser, reason: str) -> bool:
    """Skip an open repeat as an ordinary item is skipped (the same rules and messages, so the skip does not give
    the repeat away); False when the person has no open repeat of the item. A skipped repeat has no judgment and
    counts for nothing."""
    repeat = (
        Repeat.objects.select_for_update()
        .filter(project=project, item=item, annotator_id=annotator.pk, answered_at__isnull=True)
        .first()
    )
    if repeat is None:
        return False
    reason = check_skip_reason(reason)
    repeat.skip_reason = reason
    repeat.answered_at = timezone.now()
    repeat.save(update_fields=["skip_reason", "answered_at"])
    return True


def judgment_skip(*, project: Project, item: Item, annotator: AbstractBaseUser, reason: str) -> None:
    """The page's skip: an open repeat's while there is one (nothing tells it apart), the ordinary skip otherwise."""
    if not repeat_skip(project=project, item=item, annotator=annotator, reason=reason):
        services.assignment_skip(project=project, item=item, annotator=annotator, reason=reason)


# Not atomic itself: the ordinary save opens its own transaction, and a block around it would add a savepoint's two
# statements to every save-and-next (tests/annotation/test_save_and_next_query_budget.py).
def judgment_save_and_claim_next(
    *, project: Project, item: Item, annotator: AbstractBaseUser, save: SaveRequest, claim_next: bool
) -> tuple[Annotation | Repeat, Assignment | None]:
    """The page's save: a repeat's answer while the repeat is open, the ordinary save otherwise; then (with
    ``claim_next``) the next item, in the same transaction."""
    if repeat_open_for(project=project, item=item, annotator=annotator) is None:
        return services.annotation_save_and_claim_next(
            project=project, item=item, annotator=annotator, save=save, claim_next=claim_next
        )
    return _repeat_answer_and_claim_next(
        project=project, item=item, annotator=annotator, save=save, claim_next=claim_next
    )


@transaction.atomic(durable=True)
def _repeat_answer_and_claim_next(
    *, project: Project, item: Item, annotator: AbstractBaseUser, save: SaveRequest, claim_next: bool
) -> tuple[Repeat, Assignment | None]:
    repeat = repeat_answer(project=project, item=item, annotator=annotator, save=save)
    if repeat is None:  # answered meanwhile (a second tab): the post was the same judgment, nothing more to do
        repeat = Repeat.objects.get(project=project, item=item, annotator_id=annotator.pk)
    claimed = assignment_claim_next(project=project, annotator=annotator) if claim_next else None
    return repeat, claimed
