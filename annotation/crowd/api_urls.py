from django.urls import path

from annotation.crowd import api as study_api

urlpatterns = [
    path("projects/<int:project_id>/study-links/", study_api.StudyLinkListApi.as_view(), name="api-study-links"),
    path(
        "projects/<int:project_id>/study-links/<int:link_id>/",
        study_api.StudyLinkDetailApi.as_view(),
        name="api-study-link",
    ),
    path(
        "projects/<int:project_id>/study-links/<int:link_id>/participants/",
        study_api.StudyParticipantExportApi.as_view(),
        name="api-study-participants",
    ),
]
