"""Filters for the lead's pages: per-mille as the sliders' percent, stable response names, one-line prompts."""

from __future__ import annotations

import re
from typing import Any

from django import template

from aggregation.selectors import response_name

register = template.Library()

_BR_OR_SPACE = re.compile(r"(?:<br\s*/?>|\s)+", re.IGNORECASE)


@register.filter
def percent(permille: Any) -> str:
    """700 → "70", 705 → "70.5": what the annotators' sliders show for a stored per-mille value."""
    if permille is None or permille == "":
        return "—"
    value = int(permille)
    return str(value // 10) if value % 10 == 0 else f"{value / 10:.1f}"


@register.filter
def one_line(text: Any) -> str:
    """A prompt as one line of plain text: scraped prompts carry literal <br> tags, which must not show as text."""
    return _BR_OR_SPACE.sub(" ", str(text or "")).strip()


@register.simple_tag
def response_label(position: Any, model: Any = "") -> str:
    return response_name(position=position, model=model)


@register.simple_tag
def preferred_name(aggregate: Any) -> str:
    """The aggregate's preferred response by stable name, from the item's prefetched responses."""
    position = aggregate.best_position
    models = {r.position: r.model_name for r in aggregate.item.responses.all()}
    return response_name(position=position, model=models.get(position, ""))
