from django.apps import AppConfig


class AggregationConfig(AppConfig):
    name = "aggregation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: the receivers load models, which the app registry allows only now.
        from aggregation import receivers

        receivers.connect()
