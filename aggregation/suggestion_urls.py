from django.urls import path

from aggregation import suggestion_views

urlpatterns = [
    path("projects/<int:project_id>/suggestions/", suggestion_views.suggestion_card, name="suggestion_card"),
    path(
        "projects/<int:project_id>/suggestions/handoff/",
        suggestion_views.suggestion_handoff,
        name="suggestion_handoff",
    ),
    path(
        "projects/<int:project_id>/suggestions/handoff/undo/",
        suggestion_views.suggestion_handoff_undo,
        name="suggestion_handoff_undo",
    ),
    path(
        "projects/<int:project_id>/suggestions/generate/",
        suggestion_views.suggestion_generate,
        name="suggestion_generate",
    ),
]
