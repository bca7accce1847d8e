from django.apps import AppConfig


class AggregationConfig(AppConfig):
    name = "aggregation"
    default_auto_field = "django.db.models.BigAutoField"
