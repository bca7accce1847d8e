"""A person signs in through the OpenID Connect provider in a real browser: the login page's single sign-on link,
the provider (a small one on 127.0.0.1), back to Penumbra signed in as the account the claims name, a lead of the
project the roles claim names."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from projects.models import Membership
from tests.factories import ProjectFactory
from tests.sso.provider import start_provider

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider(settings):
    provider, server = start_provider()
    settings.OIDC_ENABLED = True
    settings.OIDC_ROLES_CLAIM = "roles"
    for name, value in provider.endpoints().items():
        setattr(settings, name, value)
    yield provider
    server.shutdown()
    server.server_close()


def test_sign_in_through_the_provider(page, live_server, provider, shot):
    project = ProjectFactory(name="SSO project")
    provider.claims = {"sub": "u-77", "preferred_username": "gale", "email": "gale@lab.example",
                       "roles": [f"{project.slug}:lead"]}  # fmt: skip

    page.goto(f"{live_server.url}/accounts/login/")
    shot(page, "login-page-with-single-sign-on")
    page.get_by_role("link", name="Sign in with your organisation (single sign-on)").click()
    page.wait_for_url(f"{live_server.url}/")
    shot(page, "signed-in-through-the-provider")

    assert "SSO project" in page.content()
    gale = get_user_model().objects.get(username="gale")
    assert Membership.objects.get(project=project, user=gale).role == Membership.Role.LEAD
    assert provider.token_requests == 1
