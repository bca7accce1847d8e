from django.apps import AppConfig


class AggregationConfig(AppConfig):
    name = "aggregation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: the receivers load models, which the app registry allows only now.
        from aggregation import receivers
        from aggregation.cards import dashboard_card_register
        from aggregation.designs.selectors import study_card_context
        from aggregation.exports.tasks import export_run
        from projects.jobs import job_task_register
        from projects.models import Job

        receivers.connect()
        dashboard_card_register(name="study", template="dashboard/partials/study_card.html", context=study_card_context)
        job_task_register(kind=Job.Kind.EXPORT, task=export_run)
