"""Running a sample file through the format imports, and reading back what was stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.models.functions import Coalesce

from annotation.imports.formats import labels_import_formatted
from annotation.models import Annotation
from projects.imports.formats import items_import_formatted
from projects.models import Item, Project

DATA = Path(__file__).parent / "data"


def import_items(project: Project, fmt: str, name: str, **options: Any):
    with (DATA / name).open("rb") as handle:
        return items_import_formatted(project=project, fmt=fmt, handle=handle, **options)


def import_labels(project: Project, fmt: str, name: str, **options: Any):
    with (DATA / name).open("rb") as handle:
        return labels_import_formatted(project=project, fmt=fmt, handle=handle, **options)


def stored_items(project: Project) -> dict[str, tuple[str, list[str]]]:
    """external id → (prompt, response texts in stored order)."""
    return {
        item.external_id: (item.prompt, [r.text for r in item.responses.order_by("position")])
        for item in Item.objects.filter(project=project)
    }


def stored_labels(project: Project) -> dict[tuple[str, str], Any]:
    """(item external id, annotator as the file names them) → binary choice or Likert point."""
    return {
        (a.item.external_id, a.annotator_name): a.binary_choice if a.mode == "binary" else a.likert_value
        for a in Annotation.objects.filter(project=project)
        .select_related("item")
        .annotate(annotator_name=Coalesce("annotator__imported_identity__external_id", "annotator__username"))
    }


def snapshot(project: Project) -> tuple[int, int]:
    return Item.objects.filter(project=project).count(), Annotation.objects.filter(project=project).count()
