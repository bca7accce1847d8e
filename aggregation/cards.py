"""Cards an app above aggregation adds to the lead dashboard, registered from that app's ``AppConfig.ready``.

The dashboard lives here, but the suggestion card belongs to the suggestions app, which sits above aggregation:
it registers its template and context function, so aggregation shows the card without importing the app. A card
nobody registered is simply left out (the dashboard template skips an empty template name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CardContext = Callable[..., dict[str, Any]]

_CARDS: dict[str, tuple[str, CardContext]] = {}


def dashboard_card_register(*, name: str, template: str, context: CardContext) -> None:
    """``context(user=…, project_id=…)`` returns the card's context; registering a name again replaces it."""
    _CARDS[name] = (template, context)


def dashboard_card(name: str, *, user: Any, project_id: int) -> tuple[str | None, dict[str, Any]]:
    """(template, context) of a registered card, or (None, {}) when no app registered it."""
    if name not in _CARDS:
        return None, {}
    template, context = _CARDS[name]
    return template, context(user=user, project_id=project_id)
