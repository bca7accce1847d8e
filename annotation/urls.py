from django.urls import path

from annotation.imports import views as import_views
from annotation.page import views

urlpatterns = [
    path("projects/<int:project_id>/annotate/", views.annotate_next, name="annotate_next"),
    path("projects/<int:project_id>/annotate/previous/", views.annotate_previous, name="annotate_previous"),
    path("projects/<int:project_id>/annotate/done/", views.annotate_done, name="annotate_done"),
    path("projects/<int:project_id>/items/<int:item_id>/annotate/", views.annotate_item, name="annotate_item"),
    path("projects/<int:project_id>/items/<int:item_id>/skip/", views.annotate_skip, name="annotate_skip"),
    path("projects/<int:project_id>/items/<int:item_id>/accept/", views.annotate_accept, name="annotate_accept"),
    path("projects/<int:project_id>/items/<int:item_id>/keep/", views.annotate_keep, name="annotate_keep"),
    path("projects/<int:project_id>/import/", import_views.import_page, name="import_page"),
    path("projects/<int:project_id>/import/<int:job_id>/", import_views.import_job, name="import_job"),
    path("projects/<int:project_id>/import/<int:job_id>/run/", import_views.import_confirm, name="import_confirm"),
    path(
        "projects/<int:project_id>/import/annotators/<int:identity_id>/link/",
        import_views.identity_link,
        name="import_identity_link",
    ),
]
