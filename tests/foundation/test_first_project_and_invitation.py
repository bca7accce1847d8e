"""From nothing to a first project with an invited annotator, with the commands docs/guides/operations.md gives."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.http import HttpRequest
from django.test import Client

from projects.models import Membership, Project
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_new_annotator_sets_a_password_through_the_link_and_finds_the_project():
    UserFactory(username="admin")
    _run("create_project", "Summaries", "--lead", "admin", "--mode", "binary")
    project = Project.objects.get(name="Summaries")

    output = _run("member_add", project.slug, "alice", "--base-url", "https://penumbra.example.org")

    assert Membership.objects.get(project=project, user__username="alice").role == "annotator"
    assert not get_user_model().objects.get(username="alice").has_usable_password()
    link = re.search(r"https://penumbra\.example\.org(/accounts/reset/\S+/\S+/)", output)
    assert link, output
    browser = Client()
    form_page = browser.get(link.group(1), follow=True)
    assert "Choose a password" in form_page.content.decode()
    done = browser.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a long new passphrase", "new_password2": "a long new passphrase"},
        follow=True,
    )
    assert "Summaries" in done.content.decode()  # logged in, on the home page with the project
    assert _password_works("alice", "a long new passphrase")
    # The link works once.
    again = Client().get(link.group(1), follow=True)
    assert "no longer valid" in again.content.decode()


def _password_works(username: str, password: str) -> bool:
    # django-axes checks every authentication against the request it came with.
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = "127.0.0.1"
    return Client().login(request=request, username=username, password=password)


def test_an_existing_user_needs_no_link_and_roles_can_change():
    UserFactory(username="admin")
    UserFactory(username="bob")
    _run("create_project", "Summaries", "--lead", "admin")
    project = Project.objects.get(name="Summaries")

    output = _run("member_add", str(project.pk), "bob", "--role", "lead")

    assert "existing password" in output
    assert "/accounts/reset/" not in output
    assert Membership.objects.get(project=project, user__username="bob").role == "lead"
    assert _password_works("bob", PASSWORD)


def test_unknown_project_is_named():
    with pytest.raises(CommandError, match="No project with slug or id 'nowhere'"):
        _run("member_add", "nowhere", "alice")
