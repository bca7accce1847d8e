"""Aggregation's reactions to the events of config.events, connected once by AggregationConfig.ready.

The writers (projects, annotation, aggregation.handoff) only announce; this is the one place that turns an event
into recomputation, so no lower app imports aggregation.
"""

from __future__ import annotations

from typing import Any

from aggregation import dispatch
from aggregation.handoff import handoff_evaluate
from aggregation.suggestion_figures import suggestion_figures_recompute
from config import events


def _labels_changed(*, project_id: int, item_ids: list[int], **_: Any) -> None:
    dispatch.on_annotations_changed(project_id=project_id, item_ids=item_ids)


def _items_imported(*, project_id: int, **_: Any) -> None:
    # New items carry no labels, so no item aggregate changes; progress and suggestion counts (project figures) do.
    dispatch.on_annotations_changed(project_id=project_id, item_ids=[])


def _settings_changed(*, project_id: int, **_: Any) -> None:
    dispatch.on_settings_changed(project_id=project_id)


def _suggestions_changed(*, project_id: int, **_: Any) -> None:
    # Sent at the end of a suggestion job, in its worker: new suggestions change every human-vs-LLM comparison of
    # their items, and the handoff rule reads those comparisons. Run now, as the job did before this event existed.
    suggestion_figures_recompute(project_id=project_id)
    handoff_evaluate(project_id=project_id)


def connect() -> None:
    """Idempotent (dispatch_uid): a second ready() does not double the work."""
    events.LABELS_CHANGED.connect(_labels_changed, weak=False, dispatch_uid="aggregation.labels_changed")
    events.ITEMS_IMPORTED.connect(_items_imported, weak=False, dispatch_uid="aggregation.items_imported")
    events.SETTINGS_CHANGED.connect(_settings_changed, weak=False, dispatch_uid="aggregation.settings_changed")
    events.SUGGESTIONS_CHANGED.connect(_suggestions_changed, weak=False, dispatch_uid="aggregation.suggestions_changed")
