from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: the task module loads models, which the app registry allows only now.
        from annotation.imports.tasks import import_labels_run
        from projects.jobs import job_task_register
        from projects.models import Job

        job_task_register(kind=Job.Kind.IMPORT_LABELS, task=import_labels_run)
