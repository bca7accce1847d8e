"""Signing in through a real OpenID Connect provider on 127.0.0.1 (authorization code, PKCE, RS256 ID token): the
account is made from the claims, project roles come from the roles claim, local accounts keep their passwords and
are never taken over by a provider's name, and nothing answers while single sign-on is off."""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from projects.models import Membership
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def _sign_in(client, provider, claims, next_url="/"):
    provider.claims = claims
    start = client.get(reverse("oidc_authentication_init"), {"next": next_url})
    assert start.status_code == 302
    assert start["Location"].startswith(provider.base_url + "/authorize?")
    back = httpx.get(start["Location"], follow_redirects=False)  # the provider signs the person in
    assert back.status_code == 302
    callback = back.headers["location"].removeprefix("http://testserver")
    return client.get(callback)


def test_a_new_person_signs_in_and_gets_the_roles_of_the_claim(client, provider, project, settings):
    settings.OIDC_ROLES_CLAIM = "penumbra_roles"
    roles = [f"{project.slug}:lead", "no-such-project:lead", f"{project.slug}:emperor"]
    claims = {"sub": "u-123", "preferred_username": "dana", "email": "dana@lab.example", "penumbra_roles": roles}

    answer = _sign_in(client, provider, claims)

    assert answer.status_code == 302
    assert answer["Location"] == "/"
    dana = get_user_model().objects.get(username="dana")
    assert dana.email == "dana@lab.example"
    assert not dana.has_usable_password()
    assert Membership.objects.get(project=project, user=dana).role == "lead"
    assert provider.token_requests == 1
    assert client.get(reverse("dashboard", args=[project.pk])).status_code == 200  # signed in, as a lead


def test_local_accounts_keep_their_passwords_and_are_not_taken_over(client, provider):
    UserFactory(username="erin")  # a local account with a password

    refused = _sign_in(client, provider, {"sub": "u-9", "preferred_username": "erin"})

    assert refused.status_code == 302
    assert refused["Location"] == reverse("login")
    assert "_auth_user_id" not in client.session
    answer = client.post(reverse("login"), {"username": "erin", "password": PASSWORD})
    assert answer.status_code == 302
    assert client.session["_auth_user_id"] == str(get_user_model().objects.get(username="erin").pk)


def test_a_code_is_used_once(client, provider):
    provider.claims = {"sub": "u-5", "preferred_username": "finn"}
    start = client.get(reverse("oidc_authentication_init"))
    callback = httpx.get(start["Location"]).headers["location"].removeprefix("http://testserver")
    assert client.get(callback)["Location"] == "/"
    client.logout()
    replay = client.get(callback)  # the state left with the session and the code is spent at the provider
    assert replay["Location"] == reverse("login")
    assert "_auth_user_id" not in client.session


def test_single_sign_on_is_off_by_default(client, settings):
    assert settings.OIDC_ENABLED is False
    assert client.get(reverse("oidc_authentication_init")).status_code == 404
    assert client.get(reverse("oidc_authentication_callback")).status_code == 404
    assert b"single sign-on" not in client.get(reverse("login")).content
