import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("penumbra")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The job tasks (imports, exports, suggestions) live beside the services they call; each app's AppConfig.ready
# imports its own and registers it with projects.jobs, so every process that sets Django up knows them.


@task_prerun.connect
@task_postrun.connect
def database_connections_checked(task: Any = None, **_kwargs: Any) -> None:
    """Around each task in a worker, what Django does around each request: close a connection that is past
    DB_CONN_MAX_AGE or left unusable, and health-check a kept one before its next query.

    With CELERY_DB_REUSE_MAX set (settings.py), Celery's Django fixup no longer closes the connection after every
    task; without this a worker would keep one that died with a PostgreSQL restart and fail task after task. Eager
    tasks run inside the caller's request or test transaction, whose connection is not the task's to close."""
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
