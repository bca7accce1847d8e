from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "projects.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from projects.webhooks import receivers

        receivers.connect()
