from django.urls import path

from suggestions import api

urlpatterns = [
    path("projects/<int:project_id>/suggestions/", api.SuggestionListApi.as_view(), name="api-suggestions"),
    path(
        "projects/<int:project_id>/suggestions/generate/",
        api.SuggestionGenerateApi.as_view(),
        name="api-suggestions-generate",
    ),
    path("projects/<int:project_id>/handoff/", api.HandoffApi.as_view(), name="api-handoff"),
    path("projects/<int:project_id>/requests/", api.LabelRequestApi.as_view(), name="api-label-requests"),
    path("projects/<int:project_id>/contracts/", api.ContractsApi.as_view(), name="api-contracts"),
]
