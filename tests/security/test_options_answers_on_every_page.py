"""OPTIONS on every URL the project serves answers without a server error, for a visitor and for a lead: a method
a page does not take is a 405 naming the ones it does, never a 500 (the API docs' OPTIONS used to render a
template that does not exist)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.api.test_participant_permission_matrix import PATTERNS, Pattern, concrete_path, study_world  # noqa: F401


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.name or p.route for p in PATTERNS])
def test_options_never_answers_a_server_error(pattern: Pattern, study_world, db, django_user_model):  # noqa: F811
    path = concrete_path(pattern.route, study_world["samples"])
    lead = Client(raise_request_exception=False)
    lead.force_login(django_user_model.objects.get(username="lead"), backend="config.auth.CachedModelBackend")
    for client in (Client(raise_request_exception=False), lead):
        response = client.options(path)
        assert response.status_code < 500, (path, response.status_code)
        if response.status_code == 405:
            assert response["Allow"], path
