from django.urls import path

from annotation import views

urlpatterns = [
    path("projects/<int:project_id>/annotate/", views.annotate_next, name="annotate_next"),
    path("projects/<int:project_id>/annotate/previous/", views.annotate_previous, name="annotate_previous"),
    path("projects/<int:project_id>/annotate/done/", views.annotate_done, name="annotate_done"),
    path("projects/<int:project_id>/items/<int:item_id>/annotate/", views.annotate_item, name="annotate_item"),
    path("projects/<int:project_id>/items/<int:item_id>/skip/", views.annotate_skip, name="annotate_skip"),
    path("projects/<int:project_id>/items/<int:item_id>/accept/", views.annotate_accept, name="annotate_accept"),
    path("projects/<int:project_id>/items/<int:item_id>/keep/", views.annotate_keep, name="annotate_keep"),
]
