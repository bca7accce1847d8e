from django.urls import path

from projects.webhooks import views

urlpatterns = [
    path("projects/<int:project_id>/webhooks/", views.webhooks_page, name="webhooks_page"),
    path("projects/<int:project_id>/webhooks/<int:webhook_id>/delete/", views.webhook_remove, name="webhook_remove"),
    path(
        "projects/<int:project_id>/webhooks/deliveries/<int:delivery_id>/redeliver/",
        views.webhook_redeliver_view,
        name="webhook_redeliver",
    ),
]
