"""Repeated wrong passwords lock the (account, address) pair out, even for the right password, for a while; the
account alone locks only after many more failures from everywhere together. A guesser cannot lock other accounts,
nor the same account for other addresses; the client address is read through the configured trusted proxies only;
token API access is untouched by any lock."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.factories import PASSWORD, UserFactory


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1", **headers: str):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address, **headers)


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
def test_a_lockout_from_one_address_leaves_other_accounts_and_addresses_able_to_log_in(settings):
    target, neighbour = UserFactory(username="target"), UserFactory(username="neighbour")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(Client(), target.username, "not the password", address="10.0.1.1")
    assert _login(Client(), target.username, PASSWORD, address="10.0.1.1").status_code == 429

    assert _login(Client(), neighbour.username, PASSWORD, address="10.0.1.1").status_code == 302, "other accounts"
    assert _login(Client(), target.username, PASSWORD, address="10.0.2.1").status_code == 302, "other addresses"


@pytest.mark.django_db
def test_the_account_is_slowed_everywhere_after_the_slower_per_account_limit(settings):
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 3 * settings.AXES_FAILURE_LIMIT
    settings.LOGIN_ACCOUNT_SLOW_SECONDS = 60
    user = UserFactory(username="target")
    for address in range(3):  # each address stays under the pair limit
        for _ in range(settings.AXES_FAILURE_LIMIT - 1):
            _login(Client(), user.username, "not the password", address=f"10.0.4.{address}")
    assert _login(Client(), user.username, PASSWORD, address="10.0.5.1").status_code == 302, "not yet"
    for address in range(settings.LOGIN_ACCOUNT_FAILURE_LIMIT):
        _login(Client(), user.username, "not the password", address=f"10.0.6.{address}")

    # Slowed, not locked: the unknown devices share one attempt a minute, which the guesser's next try takes.
    _login(Client(), user.username, "not the password", address="10.0.6.250")
    slowed = _login(Client(), user.username, PASSWORD, address="10.0.7.1")
    assert slowed.status_code == 429
    assert b"wait a few seconds" in slowed.content
    assert _login(Client(), "someone-else", PASSWORD, address="10.0.7.1").status_code == 200, "only that account"


@pytest.mark.django_db
def test_behind_a_proxy_the_forwarded_client_is_locked_not_the_proxy(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    user = UserFactory(username="target")
    proxy = "172.18.0.2"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(Client(), user.username, "wrong", address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert (
        _login(Client(), user.username, PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 429
    )
    # Another client through the same proxy is not locked out of the same account.
    assert (
        _login(Client(), user.username, PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="198.51.100.4").status_code == 302
    )


@pytest.mark.django_db
def test_a_forged_forwarded_header_does_not_escape_the_lock(settings):
    """The client may prepend anything; only the entry our proxy appended is believed."""
    settings.TRUSTED_PROXY_COUNT = 1
    user = UserFactory(username="target")
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        forged = f"10.99.0.{attempt}, 203.0.113.9"
        _login(Client(), user.username, "wrong", address="172.18.0.2", HTTP_X_FORWARDED_FOR=forged)
    response = _login(
        Client(), user.username, PASSWORD, address="172.18.0.2", HTTP_X_FORWARDED_FOR="10.99.9.9, 203.0.113.9"
    )
    assert response.status_code == 429


@pytest.mark.django_db
def test_without_trusted_proxies_the_header_is_ignored(settings):
    settings.TRUSTED_PROXY_COUNT = 0
    user = UserFactory(username="target")
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        _login(Client(), user.username, "wrong", address="10.0.8.1", HTTP_X_FORWARDED_FOR=f"10.99.1.{attempt}")
    assert _login(Client(), user.username, PASSWORD, address="10.0.8.1").status_code == 429


@pytest.mark.django_db
def test_token_api_access_keeps_working_for_a_locked_account(settings):
    user = UserFactory(username="target")
    token = Token.objects.create(user=user)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login(Client(), user.username, "not the password")
    assert _login(Client(), user.username, PASSWORD).status_code == 429

    response = Client().get("/api/projects/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200


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
