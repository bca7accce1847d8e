"""What the annotator's queue serves before its ordinary scan: unannounced repeats, then escalated items.

``annotation.services`` asks :func:`queue_first` once per claim, after the person's own live claim and before the
ordinary scan, and does the claiming itself; in a method study it asks :func:`repeat_to_serve` before the plan.
Both parts are off (no statement at all) unless the project turns them on, so a plain project's queue keeps its
statement budget.

* **Repeats** (``repeat_rate`` > 0): each of a person's labels is drawn for a repeat with probability ``repeat_rate``
  by a hash of (project seed, annotator, item) computed inside the query (a multiplicative hash modulo a prime, so
  consecutive item ids spread evenly). A drawn label comes back once at least ``repeat_delay_items`` of their later
  labels and ``repeat_delay_minutes`` have passed. It comes back as the same page, in the same response order, with
  empty sliders: nothing on the page says repeat (``annotation.page.selectors.annotation_page_context`` hides the
  earlier judgment while the repeat is open), and the answer goes to the Repeat row, not the annotation. Projects
  showing suggestions after labelling get no repeats: their resolution step would show the model's answer and the
  earlier judgment side by side.
* **Escalated items** (``adaptive_cap`` and ``adaptive_budget`` > 0): items the adaptive rule gave extra labels
  (ItemEscalation, drawn by ``aggregation.designs.adaptive``) while they are below the labels they want, to the
  named expert alone when there is one, to anyone who has not had the item otherwise; most wanted first.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Mod

from annotation.models import Annotation, Assignment, Repeat
from annotation.selectors import live_claims_by_others
from projects.models import Item, Project
from projects.selectors import item_with_responses

#: The hash: (item · MULTIPLIER + annotator · ANNOTATOR_MULTIPLIER + seed) mod MODULUS, below repeat_threshold(rate).
MODULUS = 10007
MULTIPLIER = 2654435761
ANNOTATOR_MULTIPLIER = 40503


def repeat_threshold(rate: float) -> int:
    """The hash values below this are drawn: one whole number for the query and for :func:`repeat_drawn` (a hash
    equal to ``rate · MODULUS``'s whole part must count the same in both)."""
    return int(rate * MODULUS)


def repeat_drawn(*, seed: int, annotator_id: int, item_id: int, rate: float) -> bool:
    """The draw of :func:`queue_first` in Python (the query computes the same), for tests and exports."""
    draw = (item_id * MULTIPLIER + annotator_id * ANNOTATOR_MULTIPLIER + seed % MODULUS) % MODULUS
    return draw < repeat_threshold(rate)


def queue_first(*, project: Project, annotator: AbstractBaseUser, now: datetime) -> Assignment | QuerySet[Item] | None:
    """A repeat to serve now (the person's earlier assignment of the item, its item loaded with responses), or the
    escalated items this person may take (unlocked candidates, best first), or None."""
    repeat = repeat_to_serve(project=project, annotator_id=int(annotator.pk), now=now)
    if repeat is not None:
        return repeat
    if project.adaptive_cap > 0 and project.adaptive_budget > 0:
        return _escalated_candidates(project=project, annotator_id=int(annotator.pk), now=now)
    return None


def repeat_to_serve(*, project: Project, annotator_id: int, now: datetime) -> Assignment | None:
    """The person's open or newly due repeat as their earlier assignment of the item (its item loaded with
    responses), or None. A method study asks this alone before its plan: it has no escalations."""
    if project.repeat_rate <= 0 or project.suggestion_display == Project.SuggestionDisplay.AFTER_LABEL:
        return None
    served = Repeat.objects.filter(project=project, annotator_id=annotator_id, answered_at__isnull=True).first()
    if served is None:
        served = _repeat_draw_due(project=project, annotator_id=annotator_id, now=now)
    if served is None:
        return None
    assignment = Assignment.objects.filter(item_id=served.item_id, annotator_id=annotator_id).first()
    item = item_with_responses(project=project, item_id=served.item_id)
    if assignment is None or item is None:
        return None
    assignment.item = item
    return assignment


def _repeat_draw_due(*, project: Project, annotator_id: int, now: datetime) -> Repeat | None:
    own = Annotation.objects.filter(project=project, annotator_id=annotator_id, source__in=("page", "api"))
    # Their label delay_items back: anything older has at least delay_items of their labels after it.
    cutoff = own.order_by("-created_at", "-pk").values_list("created_at", flat=True)[
        project.repeat_delay_items : project.repeat_delay_items + 1
    ]
    threshold = repeat_threshold(project.repeat_rate)
    waited = now - timedelta(minutes=project.repeat_delay_minutes)
    drawn = (
        own.filter(created_at__lte=Subquery(cutoff), updated_at__lte=waited)
        .filter(~Exists(Repeat.objects.filter(item=OuterRef("item"), annotator_id=annotator_id)))
        .annotate(
            draw=Mod(
                F("item_id") * Value(MULTIPLIER) + Value(annotator_id * ANNOTATOR_MULTIPLIER + project.seed % MODULUS),
                Value(MODULUS),
            )
        )
        .filter(draw__lt=threshold)
        .order_by("created_at", "pk")
        .first()
    )
    if drawn is None:
        return None
    between = own.filter(created_at__gt=drawn.created_at).count()
    return Repeat.objects.create(
        project=project,
        item_id=drawn.item_id,
        annotator_id=annotator_id,
        annotation=drawn,
        response_order=drawn.response_order,
        items_between=between,
        served_at=now,
    )


def _escalated_candidates(*, project: Project, annotator_id: int, now: datetime) -> QuerySet[Item]:
    return (
        Item.objects.filter(project=project, escalation__isnull=False, annotation_count__lt=F("escalation__wanted"))
        .filter(Q(escalation__expert__isnull=True) | Q(escalation__expert_id=annotator_id))
        .filter(~Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator_id=annotator_id)))
        .alias(claims=live_claims_by_others(annotator_id=annotator_id, now=now))
        .filter(claims__lt=F("escalation__wanted") - F("annotation_count"))
        .order_by(F("annotation_count") - F("escalation__wanted"), "queue_key")
    )
