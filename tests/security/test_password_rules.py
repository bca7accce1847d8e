"""All four of Django's password validators apply, and the demo's documented password passes them."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError


@pytest.mark.parametrize(
    ("password", "reason"),
    [
        ("short1", "too short"),
        ("password123", "too common"),
        ("8675309214", "entirely numeric"),
        ("annotator-jones", "too similar"),
    ],
)
def test_weak_passwords_are_refused(password, reason):
    user = get_user_model()(username="annotator-jones")
    with pytest.raises(ValidationError) as error:
        validate_password(password, user)
    assert reason in " ".join(error.value.messages)


@pytest.mark.django_db
def test_the_demo_seeds_with_its_documented_password_and_refuses_a_weak_one(client):
    call_command("seed_demo", stdout=io.StringIO())
    assert get_user_model().objects.get(username="lead").check_password("penumbra-demo")

    with pytest.raises(CommandError, match=r"--password: .*too common"):
        call_command("seed_demo", password="password", stdout=io.StringIO())
