"""The events that webhooks hear, connected once by WebhooksConfig.ready.

Every reaction runs after the writer's transaction commits and only writes delivery rows and queues their tasks;
whatever fails here is logged and never reaches the writer (a save, an import, a handoff). Labels saved are not
heard from each save: they are announced after the figures' recompute (figures_recomputed), which the saves
already batch, so a save does no webhook work at all.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from config import events
from projects.webhooks.services import webhook_deliveries_create, webhook_progress_announce
from projects.webhooks.tasks import deliveries_send_on_commit

logger = logging.getLogger(__name__)


def _announce(project_id: int, name: str, data: dict[str, Any]) -> None:
    try:
        with transaction.atomic():
            deliveries_send_on_commit(webhook_deliveries_create(project_id=project_id, event=name, data=data))
    except Exception:
        logger.exception("webhook deliveries for %s of project %s not made", name, project_id)


def _progress(project_id: int) -> None:
    try:
        with transaction.atomic():
            deliveries_send_on_commit(webhook_progress_announce(project_id=project_id))
    except Exception:
        logger.exception("webhook progress of project %s not announced", project_id)


def _project_event(*, project_id: int, name: str, data: dict[str, Any], **_: Any) -> None:
    transaction.on_commit(lambda: _announce(project_id, name, data))


def _figures_recomputed(*, project_id: int, **_: Any) -> None:
    transaction.on_commit(lambda: _progress(project_id))


def connect() -> None:
    events.PROJECT_EVENT.connect(_project_event, weak=False, dispatch_uid="webhooks.project_event")
    events.FIGURES_RECOMPUTED.connect(_figures_recomputed, weak=False, dispatch_uid="webhooks.figures_recomputed")
