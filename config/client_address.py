"""The client's address, read through a configured number of trusted proxies.

Behind a reverse proxy every request comes from the proxy's address, so one attacker's failed logins would lock
out everyone (and every participant would count against one address). ``X-Forwarded-For`` is written by the
client as much as by proxies, so only the entries appended by our own proxies can be believed: with
``TRUSTED_PROXY_COUNT`` = n, the client is the n-th entry from the right, the one the outermost trusted proxy
appended. Entries to its left are whatever the client sent and are ignored. With n = 0 (no proxy) the header is
ignored altogether and the socket's address is used.

django-ipware could do this, but it is not installed, and its proxy-count mode reads from the left by default;
counting from the right is the part that matters, and it fits in a few lines.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _valid(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address.strip()))
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str:
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    if proxies <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) < proxies:
        # Fewer hops than proxies: the request did not come through all of them; the socket is all we know.
        return remote
    return _valid(forwarded[-proxies]) or remote
