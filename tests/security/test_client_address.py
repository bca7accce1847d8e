"""The client address is the entry the outermost trusted proxy appended to X-Forwarded-For, never one the client
wrote; with no trusted proxy the header is ignored."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from config.client_address import client_address


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "203.0.113.9", "10.0.0.1"),  # no proxy: the header is the client's own words
        (1, "203.0.113.9", "203.0.113.9"),
        (1, "6.6.6.6, 203.0.113.9", "203.0.113.9"),  # a forged entry on the left is ignored
        (2, "6.6.6.6, 203.0.113.9, 172.18.0.5", "203.0.113.9"),
        (2, "203.0.113.9", "10.0.0.1"),  # fewer hops than proxies: not through ours
        (1, "not-an-address", "10.0.0.1"),
        (1, "", "10.0.0.1"),
        (1, "2001:db8::1", "2001:db8::1"),
    ],
)
def test_client_address(settings, proxies, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected
