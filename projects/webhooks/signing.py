"""Standard Webhooks signatures (https://www.standardwebhooks.com), by the ``standardwebhooks`` package.

Headers: ``webhook-id`` (the delivery's message id, the same on every attempt), ``webhook-timestamp`` (Unix seconds
of this attempt) and ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 of ``{id}.{timestamp}.{body}`` under the
hook's secret). A receiver verifies with any Standard Webhooks library and refuses old timestamps (replays).
"""

from __future__ import annotations

from datetime import datetime

from standardwebhooks.webhooks import Webhook as Signer


def signed_headers(*, secret: str, message_id: str, at: datetime, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Signer(secret).sign(message_id, at, body),
        "content-type": "application/json",
    }
