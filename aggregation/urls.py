from django.urls import path

from aggregation import export_views, views

urlpatterns = [
    path("projects/<int:project_id>/dashboard/", views.dashboard, name="dashboard"),
    path("projects/<int:project_id>/settings/", views.project_settings, name="project_settings"),
    path("projects/<int:project_id>/items/<int:item_id>/review/", views.item_review, name="item_review"),
    path("projects/<int:project_id>/export/", export_views.export_page, name="export_page"),
    path("projects/<int:project_id>/export/<int:job_id>/", export_views.export_job, name="export_job"),
]
