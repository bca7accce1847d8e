from django.urls import path

from annotation import api

urlpatterns = [
    path("projects/<int:project_id>/annotations/", api.AnnotationListApi.as_view(), name="api-annotations"),
    path(
        "projects/<int:project_id>/annotations/<int:annotation_id>/",
        api.AnnotationDetailApi.as_view(),
        name="api-annotation",
    ),
    path("projects/<int:project_id>/labels/import/", api.LabelImportApi.as_view(), name="api-labels-import"),
]
