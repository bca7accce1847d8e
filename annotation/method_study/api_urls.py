from django.urls import path

from annotation.method_study import api as crossover_api

urlpatterns = [
    path("projects/<int:project_id>/method-study/", crossover_api.MethodStudyApi.as_view(), name="api-method-study"),
    path(
        "projects/<int:project_id>/method-study/design/",
        crossover_api.MethodStudyDesignApi.as_view(),
        name="api-method-study-design",
    ),
]
