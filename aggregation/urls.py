from django.urls import path

from aggregation import people_views, project_views, views
from aggregation.conclusions import views as conclusion_views
from aggregation.designs import views as method_study_views
from aggregation.exports import views as export_views

urlpatterns = [
    path("projects/new/", project_views.project_new, name="project_new"),
    path("projects/<int:project_id>/archive/", project_views.project_archive_page, name="project_archive"),
    path("projects/<int:project_id>/delete/", project_views.project_delete_page, name="project_delete"),
    path("projects/<int:project_id>/people/", people_views.people_page, name="people_page"),
    path("projects/<int:project_id>/people/<int:user_id>/role/", people_views.member_role, name="member_role"),
    path(
        "projects/<int:project_id>/people/<int:user_id>/remove/",
        people_views.member_remove_page,
        name="member_remove",
    ),
    path("projects/<int:project_id>/dashboard/", views.dashboard, name="dashboard"),
    path("projects/<int:project_id>/settings/", views.project_settings, name="project_settings"),
    path("projects/<int:project_id>/items/<int:item_id>/review/", views.item_review, name="item_review"),
    path("projects/<int:project_id>/conclusions/", conclusion_views.conclusions_page, name="conclusions"),
    path("projects/<int:project_id>/conclusions/figures.csv", conclusion_views.conclusions_csv, name="conclusions_csv"),
    path(
        "projects/<int:project_id>/conclusions/leaderboard.svg",
        conclusion_views.conclusions_svg,
        name="conclusions_svg",
    ),
    path("projects/<int:project_id>/export/", export_views.export_page, name="export_page"),
    path("projects/<int:project_id>/export/<int:job_id>/", export_views.export_job, name="export_job"),
    path(
        "projects/<int:project_id>/method-study/report/",
        method_study_views.method_study_report_page,
        name="method_study_report",
    ),
    path(
        "projects/<int:project_id>/method-study/report/figures.csv",
        method_study_views.method_study_report_csv,
        name="method_study_report_csv",
    ),
    path(
        "projects/<int:project_id>/method-study/report/<str:plot>.svg",
        method_study_views.method_study_report_svg,
        name="method_study_report_svg",
    ),
]
