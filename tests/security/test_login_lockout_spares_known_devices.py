"""Lockout an attacker cannot aim (OWASP device cookies): 10 addresses guessing a lead's password until the
account-wide limit leave the lead able to sign in from a browser that signed in before, at any address; an unknown
device is slowed (one attempt per slot), not locked out; a guess from a known device counts only for that device's
own pair; the cookie is signed, bound to the account, and unreadable as a username."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse

from config.login_throttle import DEVICE_COOKIE, device_cookie_value, trusted_device
from tests.factories import PASSWORD, UserFactory

ATTACK_ADDRESSES = 10


def _login(client: Client, username: str, password: str, address: str):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def _attack(settings, username: str) -> None:
    for n in range(ATTACK_ADDRESSES):
        for _ in range(settings.AXES_FAILURE_LIMIT):
            _login(Client(), username, "guess", address=f"203.0.113.{n}")


@pytest.fixture
def limits(settings):
    settings.AXES_FAILURE_LIMIT = 5
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = ATTACK_ADDRESSES * 5
    settings.LOGIN_ACCOUNT_SLOW_SECONDS = 5
    return settings


@pytest.mark.django_db
def test_the_lead_signs_in_from_a_known_device_while_ten_addresses_attack(limits):
    lead = UserFactory(username="lead-under-attack")
    known = Client()
    assert _login(known, lead.username, PASSWORD, address="198.51.100.7").status_code == 302
    assert DEVICE_COOKIE in known.cookies
    known.post(reverse("logout"))

    _attack(limits, lead.username)

    for address in ("198.51.100.7", "192.0.2.44"):  # at home, and on the road
        fresh_session = Client()
        fresh_session.cookies[DEVICE_COOKIE] = known.cookies[DEVICE_COOKIE].value
        response = _login(fresh_session, lead.username, PASSWORD, address=address)
        assert response.status_code == 302, response.content[:300]
        assert "_auth_user_id" in fresh_session.session


@pytest.mark.django_db
def test_an_unknown_device_is_slowed_not_locked(limits):
    lead = UserFactory(username="lead-new-laptop")
    _attack(limits, lead.username)
    _login(Client(), lead.username, "guess", address="203.0.113.200")  # the guesser takes this slot's attempt
    waiting = _login(Client(), lead.username, PASSWORD, address="192.0.2.9")
    assert waiting.status_code == 429
    assert b"wait a few seconds" in waiting.content
    time.sleep(limits.LOGIN_ACCOUNT_SLOW_SECONDS + 0.2)
    assert _login(Client(), lead.username, PASSWORD, address="192.0.2.9").status_code == 302, "the next slot is its"


@pytest.mark.django_db
def test_a_known_device_is_still_held_by_its_own_pair_limit(limits):
    lead = UserFactory(username="lead-typos")
    known = Client()
    _login(known, lead.username, PASSWORD, address="198.51.100.8")
    known.post(reverse("logout"))
    for _ in range(limits.AXES_FAILURE_LIMIT):
        _login(known, lead.username, "typo", address="198.51.100.8")
    assert _login(known, lead.username, PASSWORD, address="198.51.100.8").status_code == 429
    # Its failures did not count against the account: an unknown device elsewhere is not slowed.
    assert _login(Client(), lead.username, PASSWORD, address="192.0.2.10").status_code == 302


def test_the_cookie_is_signed_and_bound_to_its_account(rf, settings):
    value = device_cookie_value("alice")
    assert "alice" not in value
    request = rf.get("/")
    request.COOKIES[DEVICE_COOKIE] = value
    assert trusted_device(request, "alice")
    assert not trusted_device(request, "bob")
    request.COOKIES[DEVICE_COOKIE] = value[:-2] + ("AA" if value[-2:] != "AA" else "BB")
    assert not trusted_device(request, "alice")
