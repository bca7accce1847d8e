"""Adaptive overlap, the writing side: one round of ``aggregation.maths.adaptive.allocate`` over the stored item
aggregates, written as ItemEscalation rows that the queue (``annotation.queue.order``) serves first.

Runs in the project recompute, after the item aggregates and the agreement. An item takes part once it has the
project's base overlap (so the extra labels come on top of it) and while no extra label it was given is still
missing (its escalation's ``wanted`` reached); each round grants at most one more label per item, up to the cap,
and never more than the budget left. The aggregate when an item is first escalated is kept, so the dashboard can say
what the extra labels changed.
"""

from __future__ import annotations

import numpy as np
from django.db import transaction
from django.db.models import F, Sum

from aggregation.maths import adaptive
from aggregation.models import ItemAggregate, Provenance
from annotation.models import ItemEscalation
from projects.models import Project

_REASON = {adaptive.HESITANT: ItemEscalation.Reason.HESITANT, adaptive.DISPUTED: ItemEscalation.Reason.DISPUTED}


@transaction.atomic
def adaptive_overlap_plan(*, project_id: int) -> int:
    """Grant this round's extra labels; returns how many. Nothing when the project has adaptive overlap off, is
    not collecting labels, or has spent its budget."""
    project = Project.objects.select_for_update().get(pk=project_id)
    if project.adaptive_cap <= 0 or project.adaptive_budget <= 0 or project.phase != Project.Phase.COLLECTING:
        return 0
    granted = ItemEscalation.objects.filter(project=project).aggregate(total=Sum("extra"))["total"] or 0
    budget = project.adaptive_budget - granted
    if budget <= 0:
        return 0
    rows = list(
        ItemAggregate.objects.filter(project=project, provenance=Provenance.HUMAN, n_annotators__gte=project.overlap)
        # An item still waiting for an extra label it was given takes no part in this round.
        .exclude(item__escalation__wanted__gt=F("item__annotation_count"))
        .values_list(
            "item_id",
            "hesitation",
            "agreement",
            "n_annotators",
            "item__escalation__extra",
            "item__annotation_count",
            "best_position",
            "margin",
        )
        .order_by("item_id")
    )
    if not rows:
        return 0

    def column(k: int, missing: float) -> np.ndarray:
        return np.array([missing if row[k] is None else row[k] for row in rows], dtype=np.float64)

    plan = adaptive.allocate(
        column(1, np.nan),
        column(2, np.nan),
        column(3, 0).astype(np.int64),
        column(4, 0).astype(np.int64),
        cap=project.adaptive_cap,
        budget=budget,
        hesitation_threshold=project.adaptive_hesitation,
        dispute_threshold=project.adaptive_dispute,
        minimum_annotators=max(2, project.overlap),
        # S_best − S_worst ∈ [0, 2]; halved it is |s| of the common scale, as the rule expects.
        margin=column(7, 0.0) / 2.0,
    )
    chosen = np.flatnonzero(plan.extra)
    for index in chosen:
        item_id, hesitation, agreement, _, extra, count, best, margin = rows[index]
        reason = _REASON[int(plan.reason[index])]
        if extra is None:
            ItemEscalation.objects.create(
                project=project,
                item_id=item_id,
                reason=reason,
                extra=1,
                wanted=count + 1,
                expert_id=project.adaptive_expert_id,
                before_preferred=best,
                before_margin=margin,
                before_hesitation=hesitation,
                before_agreement=agreement,
                before_labels=count,
            )
        else:
            ItemEscalation.objects.filter(item_id=item_id).update(
                reason=reason, extra=F("extra") + 1, wanted=count + 1, expert_id=project.adaptive_expert_id
            )
    return int(chosen.size)
