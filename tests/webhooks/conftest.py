from __future__ import annotations

import pytest

from tests.webhooks.receiver import start_receiver


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver listens on 127.0.0.1
    settings.WEBHOOK_BACKOFF_SECONDS = 0
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    return settings


@pytest.fixture
def receiver_factory():
    servers = []

    def start(script):
        receiver, server = start_receiver(script)
        servers.append(server)
        return receiver

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
