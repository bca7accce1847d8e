"""The suggestions app's reactions to the events of config.events, connected once by SuggestionsConfig.ready.

It sits above aggregation: aggregation announces that a project's figures were recomputed and never imports this
app; the suggestion figures and the handoff verdict, built on those figures, follow here.
"""

from __future__ import annotations

from typing import Any

from config import events
from suggestions.certification import labeling_figures_recompute
from suggestions.figures import suggestion_figures_recompute
from suggestions.handoff import handoff_evaluate


def _suggestion_side_recompute(*, project_id: int, **_: Any) -> None:
    # The suggestion figures put the human-human ceiling (just recomputed) beside the model's agreement; the handoff
    # rule reads them. Both run now, in the worker that sent the event, as they did when they were direct calls.
    suggestion_figures_recompute(project_id=project_id)
    handoff_evaluate(project_id=project_id)
    # After the handoff verdict: an audit that fails suspends the handoff just made or kept.
    labeling_figures_recompute(project_id=project_id)


def _suggestions_changed(*, project_id: int, **_: Any) -> None:
    # Sent at the end of a suggestion job, in its worker: new suggestions change every human-vs-LLM comparison of
    # their items, and the handoff rule reads those comparisons.
    _suggestion_side_recompute(project_id=project_id)


def connect() -> None:
    """Idempotent (dispatch_uid): a second ready() does not double the work."""
    events.SUGGESTIONS_CHANGED.connect(_suggestions_changed, weak=False, dispatch_uid="suggestions.suggestions_changed")
    events.FIGURES_RECOMPUTED.connect(
        _suggestion_side_recompute, weak=False, dispatch_uid="suggestions.figures_recomputed"
    )
