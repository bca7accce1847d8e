"""The benchmarks' synthetic items: two short markdown responses each and a suggestion preferring the second, as an
import would leave them (blind draw and queue key from the project's seed). Shared by the scripts that build a
project to measure the annotation path (annotate.py, load.py, save_cpu.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def items_create(*, project: Any, external_ids: Sequence[str], prompt: str) -> list[Any]:
    """Items with their responses and suggestions; ``prompt`` is formatted with ``external_id``."""
    from projects import blind
    from projects.models import Item, Response, Suggestion

    items = Item.objects.bulk_create(
        [
            Item(
                project=project,
                external_id=external_id,
                prompt=prompt.format(external_id=external_id),
                blind_draw=blind.uniform_draw(seed=project.seed, external_id=external_id),
                queue_key=blind.queue_key(seed=project.seed, external_id=external_id),
            )
            for external_id in external_ids
        ]
    )
    Response.objects.bulk_create(
        [
            Response(item=item, position=p, text=f"Answer {p} to {item.external_id}.\n\n```python\nprint({p})\n```")
            for item in items
            for p in (0, 1)
        ]
    )
    Suggestion.objects.bulk_create(
        [Suggestion(item=item, preferred_position=1, rationale="More complete.", model_name="bench") for item in items]
    )
    return items
