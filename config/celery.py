import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("penumbra")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Background imports and exports live beside the services they call.
app.autodiscover_tasks(["projects.imports", "annotation.imports", "aggregation.exports"])
