from django.urls import path

from annotation.method_study import views as crossover_views

urlpatterns = [
    path("projects/<int:project_id>/method-study/", crossover_views.method_study_page, name="method_study"),
    path(
        "projects/<int:project_id>/method-study/design.csv",
        crossover_views.method_study_design_csv,
        name="method_study_design",
    ),
]
