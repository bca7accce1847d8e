"""The dataset card of an export: the facts gathered from the stored figures, rendered by
aggregation.maths.dataset_card.

Served by ``GET /api/projects/{id}/export/card/`` (text/markdown), written as ``README.md`` beside the file by
``manage.py export_project --output``, and kept in the result of every export job (``card``), so no export leaves
without saying where its labels came from. Reads stored figures and a few counts: a fixed number of queries.

Provenance counts: human labels split by whether a machine answer had been shown to their author before or after
they saved (``Annotation.suggestion_shown``), model labels by the provenance of the item aggregate: ``model_handoff``
items count as ``model_certified`` when the standing handoff was made on certification (its stored basis).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from aggregation.conclusions.selectors import conclusions_for_project
from aggregation.exports.schema import export_features, features_yaml
from aggregation.exports.stream import ExportOptions, export_filename, project_has_conversations
from aggregation.maths.dataset_card import CardFacts, dataset_card
from aggregation.models import ItemAggregate, ProjectAggregate, Provenance
from annotation.models import Annotation
from projects.models import Item, Project
from projects.selectors import project_criteria


def export_card_facts(*, project: Project, options: ExportOptions) -> CardFacts:
    labels = Annotation.objects.filter(project=project).aggregate(
        total=Count("pk"), shown=Count("pk", filter=Q(suggestion_shown=True))
    )
    total, shown = int(labels["total"] or 0), int(labels["shown"] or 0)
    model = ItemAggregate.objects.filter(project=project, provenance=Provenance.MODEL_HANDOFF).count()
    aggregate = ProjectAggregate.objects.filter(project=project).only("suggestions", "labeling").first()
    stored: dict[str, Any] = (aggregate.suggestions if aggregate else None) or {}
    certified = (stored.get("handoff") or {}).get("basis") == "certification"
    labeling: dict[str, Any] = (aggregate.labeling if aggregate else None) or {}
    human_human = stored.get("human_human") or {}
    calibration = labeling.get("calibration") or {}
    return CardFacts(
        name=project.name,
        slug=project.slug,
        mode=project.mode,
        criteria=[criterion.name for criterion in project_criteria(project)],
        items=Item.objects.filter(project=project).count(),
        files=[export_filename(project=project, options=options)],
        export_format=options.format,
        generated_at=timezone.now().isoformat(timespec="seconds"),
        provenance={
            "human_blind": total - shown,
            "human_shown": shown,
            "model_handoff": 0 if certified else model,
            "model_certified": model if certified else 0,
        },
        labels=total,
        labels_with_suggestion_shown=shown,
        blind_agreement=(stored.get("blind") or {}).get("agreement"),
        shown_agreement=(stored.get("shown") or {}).get("agreement"),
        anchoring_gap=stored.get("anchoring_gap"),
        human_human=human_human.get("blind") if isinstance(human_human, dict) else None,
        gold_agreement=(stored.get("gold") or {}).get("agreement"),
        certification=labeling.get("certification") if (labeling.get("certification") or {}).get("draw") else None,
        audit=labeling.get("audit") if (labeling.get("audit") or {}).get("state") else None,
        calibration=calibration.get("bins") or [],
        verification=labeling.get("verification"),
        conclusions=conclusions_for_project(project=project),
        features=features_yaml(
            export_features(options.format, options.metadata, conversational=project_has_conversations(project))
        ),
    )


def export_card(*, project: Project, options: ExportOptions) -> str:
    """The card as Markdown (the export's README.md)."""
    return dataset_card(export_card_facts(project=project, options=options))


__all__ = ["export_card", "export_card_facts"]
