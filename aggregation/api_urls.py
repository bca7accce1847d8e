from django.urls import path

from aggregation import api
from aggregation.conclusions import views as conclusion_views
from aggregation.designs import views as method_study_views

urlpatterns = [
    path("projects/<int:project_id>/stats/", api.StatsApi.as_view(), name="api-stats"),
    path(
        "projects/<int:project_id>/method-study/report/",
        method_study_views.MethodStudyReportApi.as_view(),
        name="api-method-study-report",
    ),
    path(
        "projects/<int:project_id>/conclusions/",
        conclusion_views.ConclusionsApi.as_view(),
        name="api-conclusions",
    ),
    path("projects/<int:project_id>/aggregates/items/", api.ItemAggregateListApi.as_view(), name="api-item-aggregates"),
    path(
        "projects/<int:project_id>/aggregates/annotators/",
        api.AnnotatorAggregateListApi.as_view(),
        name="api-annotator-aggregates",
    ),
    path("projects/<int:project_id>/hesitation/", api.HesitationApi.as_view(), name="api-hesitation"),
    path("projects/<int:project_id>/export/", api.ExportApi.as_view(), name="api-export"),
    path("projects/<int:project_id>/export/card/", api.ExportCardApi.as_view(), name="api-export-card"),
    path("jobs/<int:job_id>/download/", api.ExportDownloadApi.as_view(), name="api-export-download"),
]
