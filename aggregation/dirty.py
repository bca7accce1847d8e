"""The Redis side of background recomputation: a set of dirty item ids per project and the flags that say a task
is already pending, so that however fast annotators save, a project has at most one item task and one project task
queued.

Keys are namespaced by the Celery queue (``penumbra:<queue>:…``), so deployments (and parallel test sessions)
sharing one Redis do not debounce each other. Every function here is a no-op (or says "no Redis") when the broker
is not Redis (eager mode, the memory broker), and none sends a task: ``aggregation.dispatch`` sends them, and
``aggregation.tasks`` take and clear what they run, so the tasks never import the module that sends them.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

PENDING_KEY = "penumbra:{queue}:project-recompute:{project_id}"
DIRTY_ITEMS_KEY = "penumbra:{queue}:dirty-items:{project_id}"
ITEMS_PENDING_KEY = "penumbra:{queue}:items-pending:{project_id}"
PROJECT_SECONDS_KEY = "penumbra:{queue}:project-seconds:{project_id}"
# A day: a project nobody saves to for longer starts again from the shortest delay.
PROJECT_SECONDS_EXPIRY = 86_400
_redis_clients: dict[str, Any] = {}


def celery_app() -> Any:
    # Imported when first needed: config sits above the apps and names them by string only.
    from config.celery import app

    return app


def redis_client() -> Any | None:
    """A Redis client on the broker's server when the broker is Redis; None otherwise (memory, eager)."""
    url = str(celery_app().conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://")):
        return None
    client = _redis_clients.get(url)
    if client is None:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        _redis_clients[url] = client
    return client


def _key(template: str, project_id: int) -> str:
    return template.format(queue=celery_app().conf.task_default_queue, project_id=project_id)


def changes_mark(
    *, client: Any, project_id: int, item_ids: list[int], items_expiry: int, project_expiry: int
) -> tuple[bool, bool, float | None]:
    """A save's whole Redis side in one round trip (one transaction): add the items to the project's dirty set,
    raise the items' and the project's pending flags, and read how long the last project run took.

    Returns (items flag was down, project flag was down, seconds of the last project run or None): the caller sends
    the item task for the first, the project task for the second, with a countdown paced by the third.
    """
    with client.pipeline(transaction=True) as pipe:
        if item_ids:
            pipe.sadd(_key(DIRTY_ITEMS_KEY, project_id), *item_ids)
            pipe.set(_key(ITEMS_PENDING_KEY, project_id), "1", nx=True, ex=items_expiry)
        pipe.set(_key(PENDING_KEY, project_id), "1", nx=True, ex=project_expiry)
        pipe.get(_key(PROJECT_SECONDS_KEY, project_id))
        replies = pipe.execute()
    items_raised = bool(replies[1]) if item_ids else False
    last = replies[-1]
    return items_raised, bool(replies[-2]), float(last) if last is not None else None


def project_seconds_record(*, project_id: int, seconds: float) -> None:
    """Called by the project task after a run: its CPU seconds pace the next one (``changes_mark``)."""
    client = redis_client()
    if client is None:
        return
    try:
        client.set(_key(PROJECT_SECONDS_KEY, project_id), f"{seconds:.3f}", ex=PROJECT_SECONDS_EXPIRY)
    except Exception:
        logger.warning("Could not record the project run's duration of %s; the next run is not paced", project_id)


def items_pending_lower(*, client: Any, project_id: int) -> None:
    """Lower the items' pending flag when the task could not be sent, so the next save sends one."""
    client.delete(_key(ITEMS_PENDING_KEY, project_id))


def items_dirty_take(*, project_id: int) -> list[int] | None:
    """Called by the task: clear the pending flag, then take (read and empty, atomically) the dirty set.

    The flag goes first so a save landing during the run sends the next task; one landing between the two steps
    is taken now and its extra task finds an empty set. None when there is no Redis.
    """
    client = redis_client()
    if client is None:
        return None
    client.delete(_key(ITEMS_PENDING_KEY, project_id))
    dirty = _key(DIRTY_ITEMS_KEY, project_id)
    with client.pipeline(transaction=True) as pipe:
        pipe.smembers(dirty)
        pipe.delete(dirty)
        members, _ = pipe.execute()
    return sorted(int(member) for member in members)


def items_dirty_restore(*, project_id: int, item_ids: list[int]) -> None:
    """Put taken ids back after a failed run (the retry, or reconciliation, picks them up)."""
    client = redis_client()
    if client is not None and item_ids:
        try:
            client.sadd(_key(DIRTY_ITEMS_KEY, project_id), *item_ids)
        except Exception:
            logger.warning("Could not restore dirty items of project %s; reconciliation will find them", project_id)


def project_pending_raise(*, client: Any, project_id: int, expiry: int) -> bool:
    """Raise the project's pending flag; True when it was down (the caller then sends the one project task)."""
    return bool(client.set(_key(PENDING_KEY, project_id), "1", nx=True, ex=expiry))


def project_pending_lower(*, client: Any, project_id: int) -> None:
    """Lower the project's pending flag when its task could not be sent."""
    client.delete(_key(PENDING_KEY, project_id))


def project_recompute_pending_clear(*, project_id: int) -> None:
    """Called by the task as it starts: saves from now on need a run of their own."""
    client = redis_client()
    if client is None:
        return
    try:
        client.delete(_key(PENDING_KEY, project_id))
    except Exception:
        logger.warning("Could not clear the pending flag of project %s; it expires by itself", project_id)
