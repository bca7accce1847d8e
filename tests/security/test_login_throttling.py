"""Repeated wrong passwords lock the account (and the address) out, even for the right password, for a while."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_wrong_passwords_then_the_right_one_is_refused_with_a_clear_message(settings):
    user = UserFactory(username="target")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = _login(client, user.username, "not the password")
        assert response.status_code == 200  # the ordinary "did not match" form
    assert _login(client, user.username, "not the password").status_code == 429  # the last allowed failure locks

    response = _login(client, user.username, PASSWORD)

    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_the_account_is_locked_from_another_address_too(settings):
    user = UserFactory(username="target")
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        _login(Client(), user.username, "not the password", address=f"10.0.1.{attempt}")

    response = _login(Client(), user.username, PASSWORD, address="10.0.2.1")

    assert response.status_code == 429


@pytest.mark.django_db
def test_one_address_guessing_many_accounts_is_locked(settings):
    users = [UserFactory(username=f"victim{n}") for n in range(settings.AXES_FAILURE_LIMIT)]
    for user in users:
        _login(Client(), user.username, "not the password", address="10.0.3.1")
    fresh = UserFactory(username="fresh")

    assert _login(Client(), fresh.username, PASSWORD, address="10.0.3.1").status_code == 429
    assert _login(Client(), fresh.username, PASSWORD, address="10.0.3.2").status_code == 302


@pytest.mark.django_db
def test_the_lock_cools_off(settings):
    settings.AXES_COOLOFF_TIME = dt.timedelta(seconds=4)
    user = UserFactory(username="target")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(client, user.username, "not the password")
    assert _login(client, user.username, PASSWORD).status_code == 429

    # The cache handler stores the failures with the cool-off as their expiry, so waiting is the only way to test it.
    time.sleep(4.5)

    response = _login(client, user.username, PASSWORD)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)


@pytest.mark.django_db
def test_fewer_failures_than_the_limit_do_not_lock(settings):
    user = UserFactory(username="target")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, user.username, "not the password")

    assert _login(client, user.username, PASSWORD).status_code == 302
