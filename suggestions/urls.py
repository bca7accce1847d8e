from django.urls import path

from suggestions import request_views, views

urlpatterns = [
    path("projects/<int:project_id>/requests/", request_views.label_requests_page, name="label_requests"),
    path("projects/<int:project_id>/suggestions/", views.suggestion_card, name="suggestion_card"),
    path(
        "projects/<int:project_id>/suggestions/handoff/",
        views.suggestion_handoff,
        name="suggestion_handoff",
    ),
    path(
        "projects/<int:project_id>/suggestions/handoff/undo/",
        views.suggestion_handoff_undo,
        name="suggestion_handoff_undo",
    ),
    path(
        "projects/<int:project_id>/suggestions/generate/",
        views.suggestion_generate,
        name="suggestion_generate",
    ),
]
