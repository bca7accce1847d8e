from django.urls import path
from django.views.i18n import JavaScriptCatalog

from annotation.crowd import views as study_views
from annotation.crowd.gate import participant_open

urlpatterns = [
    # Every page's scripts translate through gettext() from this catalog (djangojs.po), a participant's included:
    # it is open to them here because the gate that decides that lives on this floor, not in config.
    path("jsi18n/", participant_open(JavaScriptCatalog.as_view()), name="javascript-catalog"),
    path("study/<str:token>/", study_views.study_enter, name="study_enter"),
    path("study/<str:token>/end/", study_views.study_end, name="study_end"),
    path("study/<str:token>/consent/", study_views.study_consent, name="study_consent"),
    path("study/<str:token>/return/", study_views.study_return, name="study_return"),
    path("projects/<int:project_id>/study-links/", study_views.study_links, name="study_links"),
    path(
        "projects/<int:project_id>/study-links/<int:link_id>/",
        study_views.study_link_detail,
        name="study_link_detail",
    ),
    path(
        "projects/<int:project_id>/study-links/<int:link_id>/active/",
        study_views.study_link_active,
        name="study_link_active",
    ),
    path(
        "projects/<int:project_id>/study-links/<int:link_id>/participants/",
        study_views.study_link_export,
        name="study_link_export",
    ),
]
