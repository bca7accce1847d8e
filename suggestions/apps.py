from django.apps import AppConfig


class SuggestionsConfig(AppConfig):
    name = "suggestions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: the receivers load models, which the app registry allows only now.
        from aggregation.cards import dashboard_card_register
        from projects.jobs import job_task_register
        from projects.models import Job
        from suggestions import receivers
        from suggestions.selectors import labeling_card_context, suggestion_card_context
        from suggestions.tasks import generate_suggestions

        receivers.connect()
        dashboard_card_register(
            name="suggestions", template="suggestions/partials/card.html", context=suggestion_card_context
        )
        dashboard_card_register(
            name="labeling", template="suggestions/partials/labeling_card.html", context=labeling_card_context
        )
        job_task_register(kind=Job.Kind.SUGGEST, task=generate_suggestions)
