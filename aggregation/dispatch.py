"""The one door from writes elsewhere to background recomputation. Call inside the writing transaction."""

from __future__ import annotations


def on_annotations_changed(*, project_id: int, item_ids: list[int]) -> None:
    """Schedule recomputation of these items and (debounced) of the project, after the transaction commits."""
    # Filled in by the aggregation engine; until then nothing is scheduled.
    return None
