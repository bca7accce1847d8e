from typing import Any

from django.apps import AppConfig
from django.core.management import call_command
from django.db.models.signals import post_delete, post_migrate, post_save


def cache_table_create(sender: Any, using: str = "default", **kwargs: Any) -> None:
    """The table of a database-backed cache (PostgreSQL without Redis, config/settings.py), made after every migrate
    so no deployment step can forget it; a no-op for every other cache."""
    call_command("createcachetable", database=using, verbosity=0)


class ProjectsConfig(AppConfig):
    name = "projects"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Cache upkeep only (no business logic): every write of a criterion, whoever makes it, forgets the
        # project's cached criteria.
        from config import auth
        from config.cache_prefetch import prefetch_for_view_keyword
        from projects import jobs
        from projects.imports.tasks import import_items_run
        from projects.models import Criterion, Job
        from projects.selectors import criteria_cache_key, criteria_forget_on_change

        post_save.connect(criteria_forget_on_change, sender=Criterion, dispatch_uid="criteria_forget_save")
        post_delete.connect(criteria_forget_on_change, sender=Criterion, dispatch_uid="criteria_forget_delete")
        # Every page of a project reads its criteria: read them ahead with the session (one Redis round trip).
        prefetch_for_view_keyword(keyword="project_id", alias="default", key=criteria_cache_key)
        # And every write of a user forgets the signed-in copy config.auth keeps.
        auth.connect()
        post_migrate.connect(cache_table_create, sender=self, dispatch_uid="cache_table_create")
        # Each app names the task that runs its kind of job, so the job runner imports nothing above projects.
        jobs.job_task_register(kind=Job.Kind.IMPORT_ITEMS, task=import_items_run)
