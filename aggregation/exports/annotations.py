"""The ``annotations`` export: one line per raw label, keyset-paged by annotation id.

Each line names the item's responses by position with their text and model (``responses``), so ``choice``,
``likert``, ``values`` and ``response_order`` (stored positions) say which response they mean in any project: the
label import matches them by text and model (annotation.imports.label_rows.relocate_label).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.db.models.functions import Coalesce

from aggregation.exports.encoding import among, line
from aggregation.exports.options import ExportOptions
from annotation.models import Annotation, JudgmentValue, SuggestionExposure
from projects.models import Criterion, Project, Response


def annotation_lines(project: Project, options: ExportOptions, chunk_size: int) -> Iterator[tuple[int, list[str]]]:
    """Raw labels, keyset-paged by annotation id; the filters that concern aggregates do not apply to raw labels."""
    criterion_names = dict(Criterion.objects.filter(project=project).values_list("id", "name"))
    rows = (
        Annotation.objects.filter(project=project)
        # An imported annotator goes by the name its file gave it, not its shadow account's username.
        .annotate(annotator_name=Coalesce("annotator__imported_identity__external_id", "annotator__username"))
        .order_by("id")
        .values_list(
            "id",
            "item_id",
            "item__external_id",
            "item__is_blind",
            "annotator_id",
            "annotator_name",
            "mode",
            "response_order",
            "binary_choice",
            "likert_value",
            "suggestion_shown",
            "accepted_suggestion",
            "time_spent_ms",
            "revision_count",
            "source",
            "created_at",
            "updated_at",
            "ranking",
            "both_bad",
        )
    )
    last = 0
    while True:
        page = list(rows.filter(id__gt=last)[:chunk_size])
        if not page:
            return
        last = page[-1][0]
        annotation_ids = [row[0] for row in page]
        item_ids = {row[1] for row in page}
        values: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for annotation_id, position, criterion_id, mu, nu in (
            among(JudgmentValue.objects.all(), "annotation_id", annotation_ids)
            .order_by("annotation_id", "response__position", "criterion_id")
            .values_list("annotation_id", "response__position", "criterion_id", "mu", "nu")
        ):
            values[annotation_id].append(
                {
                    "position": position,
                    "criterion": criterion_names.get(criterion_id, str(criterion_id)),
                    "mu": mu / 1000,
                    "nu": nu / 1000,
                }
            )
        responses: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for item_id, position, text, model in (
            among(Response.objects.all(), "item_id", list(item_ids))
            .order_by("item_id", "position")
            .values_list("item_id", "position", "text", "model_name")
        ):
            responses[item_id].append({"position": position, "text": text, "model": model})
        exposures: dict[tuple[int, int], list[dict[str, str]]] = defaultdict(list)
        for item_id, annotator_id, kind, created_at in (
            among(SuggestionExposure.objects.filter(project=project), "item_id", list(item_ids))
            .order_by("created_at", "id")
            .values_list("item_id", "annotator_id", "kind", "created_at")
        ):
            exposures[(item_id, annotator_id)].append({"kind": kind, "at": created_at.isoformat()})
        for (
            annotation_id,
            item_id,
            external_id,
            item_is_blind,
            annotator_id,
            username,
            mode,
            response_order,
            binary_choice,
            likert_value,
            suggestion_shown,
            accepted,
            time_spent_ms,
            revision_count,
            source,
            created_at,
            updated_at,
            ranking,
            both_bad,
        ) in page:
            row = {
                "item": external_id,
                "annotator": username,
                "mode": mode,
                # Which response each position is, so that an import into another project (whose positions are
                # drawn from its own seed) resolves the choice, the scale and the values by response, never by
                # position alone.
                "responses": responses.get(item_id, []),
                "response_order": response_order,
                "choice": binary_choice,
                "ranking": ranking,
                "both_bad": both_bad,
                "likert": likert_value,
                "values": values.get(annotation_id, []),
                "blind": not suggestion_shown,
                "suggestion_shown": suggestion_shown,
                "accepted_suggestion": accepted,
                "item_in_blind_sample": item_is_blind,
                "exposures": exposures.get((item_id, annotator_id), []),
                "time_spent_ms": time_spent_ms,
                "revision_count": revision_count,
                "source": source,
                "timestamp": created_at.isoformat(),
                "updated_at": updated_at.isoformat(),
            }
            yield item_id, [line(row)]
