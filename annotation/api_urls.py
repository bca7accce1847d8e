from django.urls import path

from annotation import api
from annotation.imports import identity_api

urlpatterns = [
    path("projects/<int:project_id>/annotations/", api.AnnotationListApi.as_view(), name="api-annotations"),
    path(
        "projects/<int:project_id>/annotations/<int:annotation_id>/",
        api.AnnotationDetailApi.as_view(),
        name="api-annotation",
    ),
    path("projects/<int:project_id>/labels/import/", api.LabelImportApi.as_view(), name="api-labels-import"),
    path(
        "projects/<int:project_id>/imported-annotators/",
        identity_api.ImportedAnnotatorListApi.as_view(),
        name="api-imported-annotators",
    ),
    path(
        "projects/<int:project_id>/imported-annotators/<int:identity_id>/link/",
        identity_api.ImportedAnnotatorLinkApi.as_view(),
        name="api-imported-annotator-link",
    ),
]
