from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from projects.selectors import project_list_for_user


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "projects/home.html", {"projects": project_list_for_user(user=request.user)})
