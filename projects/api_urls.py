from django.urls import path

from projects import api

urlpatterns = [
    path("projects/", api.ProjectListApi.as_view(), name="api-projects"),
    path("projects/<int:project_id>/", api.ProjectDetailApi.as_view(), name="api-project"),
    path("projects/<int:project_id>/criteria/", api.CriteriaApi.as_view(), name="api-criteria"),
    path("projects/<int:project_id>/members/", api.MemberListApi.as_view(), name="api-members"),
    path("projects/<int:project_id>/items/", api.ItemListApi.as_view(), name="api-items"),
    path("projects/<int:project_id>/items/import/", api.ItemImportApi.as_view(), name="api-items-import"),
    path("projects/<int:project_id>/items/<int:item_id>/", api.ItemDetailApi.as_view(), name="api-item"),
    path("projects/<int:project_id>/jobs/", api.JobListApi.as_view(), name="api-jobs"),
    path("jobs/<int:job_id>/", api.JobDetailApi.as_view(), name="api-job"),
]
