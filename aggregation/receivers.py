"""Aggregation's reactions to the events of config.events, connected once by AggregationConfig.ready.

The writers (projects, annotation, suggestions) only announce; this is the one place that turns an event
into recomputation, so no lower app imports aggregation.
"""

from __future__ import annotations

from typing import Any

from aggregation import dispatch
from config import events


def _labels_changed(*, project_id: int, item_ids: list[int], **_: Any) -> None:
    dispatch.on_annotations_changed(project_id=project_id, item_ids=item_ids)


def _items_imported(*, project_id: int, **_: Any) -> None:
    # New items carry no labels, so no item aggregate changes; progress and suggestion counts (project figures) do.
    dispatch.on_annotations_changed(project_id=project_id, item_ids=[])


def _settings_changed(*, project_id: int, **_: Any) -> None:
    dispatch.on_settings_changed(project_id=project_id)


def connect() -> None:
    """Idempotent (dispatch_uid): a second ready() does not double the work."""
    events.LABELS_CHANGED.connect(_labels_changed, weak=False, dispatch_uid="aggregation.labels_changed")
    events.ITEMS_IMPORTED.connect(_items_imported, weak=False, dispatch_uid="aggregation.items_imported")
    events.SETTINGS_CHANGED.connect(_settings_changed, weak=False, dispatch_uid="aggregation.settings_changed")
