from __future__ import annotations

import pytest

from tests.sso.provider import start_provider


@pytest.fixture
def provider(settings):
    provider, server = start_provider()
    settings.OIDC_ENABLED = True
    for name, value in provider.endpoints().items():
        setattr(settings, name, value)
    yield provider
    server.shutdown()
    server.server_close()
