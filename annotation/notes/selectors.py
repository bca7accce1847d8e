"""Reads of item notes: the lead's review page and dashboard, the annotator's own flags. Callers check access."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotation.models import ItemNote
from projects.models import Item, Project

OPEN_FLAGS_LISTED = 20


def item_notes_for_lead(*, project: Project, item: Item) -> list[ItemNote]:
    """Every flag and comment on the item, oldest first (the lead's review page)."""
    return list(
        ItemNote.objects.filter(project=project, item=item)
        .select_related("author", "resolved_by")
        .order_by("created_at", "id")
    )


def open_flags_for_lead(*, project: Project, limit: int = OPEN_FLAGS_LISTED) -> tuple[list[ItemNote], int]:
    """The oldest open flags (they waited longest) and how many are open in all, for the dashboard."""
    flags = ItemNote.objects.filter(project=project, kind=ItemNote.Kind.FLAG, resolved_at__isnull=True)
    return list(flags.select_related("author", "item").order_by("created_at", "id")[:limit]), flags.count()


def own_flags(*, project: Project, item: Item, annotator: AbstractBaseUser | AnonymousUser) -> list[ItemNote]:
    """The annotator's own flags on this item (never other people's notes or the lead's comments)."""
    return list(
        ItemNote.objects.filter(project=project, item=item, author_id=annotator.pk, kind=ItemNote.Kind.FLAG).order_by(
            "created_at", "id"
        )
    )
