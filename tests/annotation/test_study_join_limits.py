"""New participants are limited per link and minute and per client address and hour, answered with a clear 429 page
that creates nothing; returning participants always get back in; the limits are settings."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.crowd.limits import study_join_check
from annotation.crowd.models import Participant
from annotation.crowd.services import study_link_create
from tests.annotation.study_helpers import enter, enter_url


@pytest.fixture
def link(project, lead):
    return study_link_create(project=project, created_by=lead, name="Limited")


def _join(link, pid: str, address: str, **headers: str):
    return Client().get(enter_url(link, pid), REMOTE_ADDR=address, **headers)


def test_one_address_is_limited_and_others_are_not(link, settings):
    settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR = 2
    assert _join(link, "a1", "10.1.0.1").status_code == 302
    assert _join(link, "a2", "10.1.0.1").status_code == 302
    users = get_user_model().objects.count()

    refused = _join(link, "a3", "10.1.0.1")

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "Too many new participants started from your network" in refused.content.decode()
    assert get_user_model().objects.count() == users, "nothing was created"
    assert not Participant.objects.filter(external_id="a3").exists()
    assert _join(link, "b1", "10.1.0.2").status_code == 302, "another address joins"
    assert _join(link, "a1", "10.1.0.1").status_code == 302, "a returning participant is never counted"


def test_a_link_takes_a_limited_number_of_newcomers_a_minute(link, project, lead, settings):
    settings.STUDY_NEW_PARTICIPANTS_PER_LINK_PER_MINUTE = 3
    for number in range(3):
        assert _join(link, f"p{number}", f"10.2.0.{number}").status_code == 302
    refused = _join(link, "p9", "10.2.0.9")
    assert refused.status_code == 429
    assert "at most 3 a minute" in refused.content.decode()
    other = study_link_create(project=project, created_by=lead, name="Other wave")
    assert _join(other, "p9", "10.2.0.9").status_code == 302, "the limit is per link"


def test_the_windows_end(link, settings):
    settings.STUDY_NEW_PARTICIPANTS_PER_LINK_PER_MINUTE = 1
    settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR = 1
    start = 1_800_000_000.0  # on a whole hour
    assert study_join_check(link_id=link.pk, address="10.3.0.1", now=start) is None
    assert study_join_check(link_id=link.pk, address="10.3.0.1", now=start + 1) is not None
    assert study_join_check(link_id=link.pk, address="10.3.0.2", now=start + 2) is not None, "the link's minute"
    assert study_join_check(link_id=link.pk, address="10.3.0.3", now=start + 61) is None
    assert study_join_check(link_id=link.pk, address="10.3.0.1", now=start + 3600) is None


def test_the_address_comes_through_the_trusted_proxy(link, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR = 1
    proxy = "172.18.0.2"
    assert _join(link, "c1", proxy, HTTP_X_FORWARDED_FOR="203.0.113.1").status_code == 302
    assert _join(link, "c2", proxy, HTTP_X_FORWARDED_FOR="203.0.113.2").status_code == 302, "another client"
    forged = _join(link, "c3", proxy, HTTP_X_FORWARDED_FOR="10.9.9.9, 203.0.113.1")
    assert forged.status_code == 429, "a forged left-hand entry does not make a new address"


def test_a_participant_already_in_resumes_whatever_the_limits(link, project, settings):
    client = Client()
    enter(client, link, "resumer")
    settings.STUDY_NEW_PARTICIPANTS_PER_LINK_PER_MINUTE = 1
    settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR = 1
    for _ in range(3):
        assert Client().get(enter_url(link, "resumer")).status_code == 302
