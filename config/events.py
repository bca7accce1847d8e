"""The events one app announces and another reacts to, on the lowest floor so no writer imports a reactor.

A writer calls the function for what happened, inside its transaction: ``events.labels_changed(project_id=…,
item_ids=…)``. The reacting app connects its handlers once, in its ``AppConfig.ready`` (aggregation connects
aggregation.dispatch, which defers the work until after the commit and never fails the save). This module only
routes; when and how to react is the handler's business.

Django's own ``Signal`` does the routing rather than a hand-written registry: it is thread-safe, caches its
receivers and refuses duplicate connections by ``dispatch_uid``. ``send`` (not ``send_robust``) lets a handler's
error reach the writer, exactly as the direct call it replaces did; the handlers themselves swallow what must not
fail a save.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.dispatch import Signal

# Each carries project_id (int); labels_changed also item_ids (a sorted list of int).
LABELS_CHANGED = Signal()
SETTINGS_CHANGED = Signal()
ITEMS_IMPORTED = Signal()
SUGGESTIONS_CHANGED = Signal()
FIGURES_RECOMPUTED = Signal()
# Carries project_id, name (one of PROJECT_EVENTS) and data (a JSON-ready dict): what outside systems hear of.
PROJECT_EVENT = Signal()

#: The events a project announces to the outside (projects.webhooks), by name.
PROJECT_EVENTS = (
    "import.done",
    "export.done",
    "handoff.made",
    "handoff.undone",
    "audit.suspended",
)

EVENTS = {
    "labels_changed": LABELS_CHANGED,
    "settings_changed": SETTINGS_CHANGED,
    "items_imported": ITEMS_IMPORTED,
    "suggestions_changed": SUGGESTIONS_CHANGED,
    "figures_recomputed": FIGURES_RECOMPUTED,
    "project_event": PROJECT_EVENT,
}


def labels_changed(*, project_id: int, item_ids: Iterable[int]) -> None:
    """Judgments of these items were created, revised or removed (a save, a label import, a handoff)."""
    LABELS_CHANGED.send(sender=None, project_id=int(project_id), item_ids=sorted({int(i) for i in item_ids}))


def settings_changed(*, project_id: int) -> None:
    """A setting that changes the project's figures changed (projects.services.FIGURE_SETTINGS, the criteria)."""
    SETTINGS_CHANGED.send(sender=None, project_id=int(project_id))


def items_imported(*, project_id: int) -> None:
    """An import created or updated items of the project; they carry no labels of their own yet."""
    ITEMS_IMPORTED.send(sender=None, project_id=int(project_id))


def suggestions_changed(*, project_id: int) -> None:
    """LLM suggestions of the project were generated or overwritten (outside any request; a job's end)."""
    SUGGESTIONS_CHANGED.send(sender=None, project_id=int(project_id))


def figures_recomputed(*, project_id: int) -> None:
    """The project's own figures (weights, agreement, progress) were just recomputed, in the worker that did it;
    figures built on top of them (the suggestion figures and the handoff verdict) follow in the same run."""
    FIGURES_RECOMPUTED.send(sender=None, project_id=int(project_id))


def project_event(*, project_id: int, name: str, data: dict[str, Any]) -> None:
    """Something an outside system may want to hear of happened (PROJECT_EVENTS); ``data`` says what, as JSON."""
    if name not in PROJECT_EVENTS:
        raise ValueError(f"unknown project event {name!r}")
    PROJECT_EVENT.send(sender=None, project_id=int(project_id), name=name, data=data)
