import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("penumbra")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The job tasks (imports, exports, suggestions) live beside the services they call; each app's AppConfig.ready
# imports its own and registers it with projects.jobs, so every process that sets Django up knows them.
