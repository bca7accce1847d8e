from django.urls import path

from annotation.notes import views as note_views

urlpatterns = [
    path("projects/<int:project_id>/items/<int:item_id>/flag/", note_views.item_flag, name="item_flag"),
    path("projects/<int:project_id>/items/<int:item_id>/review/comment/", note_views.item_comment, name="item_comment"),
    path("projects/<int:project_id>/items/<int:item_id>/review/gold/", note_views.item_gold, name="item_gold"),
    path(
        "projects/<int:project_id>/items/<int:item_id>/review/send-back/",
        note_views.item_send_back,
        name="item_send_back",
    ),
    path("projects/<int:project_id>/flags/<int:note_id>/resolve/", note_views.flag_resolve, name="flag_resolve"),
]
