"""The study card on the lead dashboard: repeats and self-consistency, position bias, adaptive overlap.

Reads the figures stored by ``aggregation.designs.figures`` (never computes in the request) and names the annotators.
Registered with ``aggregation.cards`` in ``AggregationConfig.ready``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from aggregation.maths.position_bias import MINIMUM_JUDGMENTS, headline_needs
from aggregation.models import ProjectAggregate
from projects.selectors import project_get_for_lead


def study_card_context(*, user: Any, project_id: int) -> dict[str, Any]:
    """The card's context: ``study`` (as stored, empty before the first recompute) with annotator names added."""
    project = project_get_for_lead(user=user, project_id=project_id)
    stored = ProjectAggregate.objects.filter(project=project).values_list("study", flat=True).first() or {}
    bias = dict(stored.get("position_bias") or {})
    if bias and (reason := headline_needs(int(bias.get("n") or 0), int(bias.get("minimum") or MINIMUM_JUDGMENTS))):
        # Figures stored before the headline had a minimum are read the same way.
        bias.update(rate=None, ci=None, reason=reason)
    consistency = dict(stored.get("consistency") or {})
    ids = {row["annotator_id"] for row in bias.get("annotators", [])}
    ids |= {row["annotator_id"] for row in consistency.get("annotators", [])}
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username")) if ids else {}
    by_annotator: dict[int, dict[str, Any]] = {}
    for row in bias.get("annotators", []):
        by_annotator.setdefault(row["annotator_id"], {})["bias"] = row
    for row in consistency.get("annotators", []):
        by_annotator.setdefault(row["annotator_id"], {})["consistency"] = row
    rows = [
        {"name": names.get(annotator_id, f"#{annotator_id}"), **parts}
        for annotator_id, parts in sorted(by_annotator.items(), key=lambda kv: names.get(kv[0], ""))
    ]
    return {
        "study_project": project,
        "study_computed": bool(stored),
        "repeats": stored.get("repeats") or {},
        "position_bias": bias,
        "consistency_n": consistency.get("n", 0),
        "study_rows": rows,
        "adaptive": stored.get("adaptive") or {},
    }
