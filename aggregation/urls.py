from django.urls import path

from aggregation import views

urlpatterns = [
    path("projects/<int:project_id>/dashboard/", views.dashboard, name="dashboard"),
    path("projects/<int:project_id>/settings/", views.project_settings, name="project_settings"),
    path("projects/<int:project_id>/items/<int:item_id>/review/", views.item_review, name="item_review"),
]
