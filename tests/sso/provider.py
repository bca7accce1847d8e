"""A small OpenID Connect provider on 127.0.0.1 for the sign-in tests: the authorization-code flow with PKCE.

/authorize signs in the person the test chose (no login form) and redirects back with a code; /token checks the
client's secret, the redirect URI and the PKCE verifier and answers an RS256 ID token with the request's nonce;
/userinfo answers the claims for the access token; /jwks the public key. Tokens are signed with PyJWT and the
``cryptography`` key that mozilla-django-oidc itself needs, so the client verifies real signatures.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

KID = "test-key-1"


@dataclass
class Provider:
    client_id: str = "penumbra"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    base_url: str = ""
    #: The claims of whoever signs in next.
    claims: dict[str, Any] = field(default_factory=dict)
    key: Any = field(default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: int = 0

    def endpoints(self) -> dict[str, str]:
        return {
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.base_url}/authorize",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.base_url}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.base_url}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.base_url}/jwks",
            "OIDC_RP_CLIENT_ID": self.client_id,
            "OIDC_RP_CLIENT_SECRET": self.client_secret,
        }

    def authorize(self, query: dict[str, str]) -> str:
        assert query["client_id"] == self.client_id
        assert query["response_type"] == "code"
        code = secrets.token_urlsafe(16)
        self.codes[code] = {**query, "claims": dict(self.claims)}
        return f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}"

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.token_requests += 1
        grant = self.codes.pop(form.get("code", ""), None)
        if grant is None or form.get("client_secret") != self.client_secret or form.get("client_id") != self.client_id:
            return 400, {"error": "invalid_grant"}
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return 400, {"error": "invalid_grant"}
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if grant.get("code_challenge") != challenge:
            return 400, {"error": "invalid_grant", "error_description": "PKCE"}
        now = int(time.time())
        claims = grant["claims"]
        id_token = jwt.encode(
            {"iss": self.base_url, "aud": self.client_id, "sub": claims["sub"], "nonce": grant.get("nonce"),
             "iat": now, "exp": now + 300},
            self.key,
            algorithm="RS256",
            headers={"kid": KID},
        )  # fmt: skip
        access = secrets.token_urlsafe(16)
        self.tokens[access] = claims
        return 200, {"access_token": access, "id_token": id_token, "token_type": "Bearer", "expires_in": 300}

    def jwks(self) -> dict[str, Any]:
        public = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": KID, "alg": "RS256", "use": "sig"}]}


def start_provider() -> tuple[Provider, ThreadingHTTPServer]:
    provider = Provider()

    class Handler(BaseHTTPRequestHandler):
        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/authorize":
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                self.send_response(302)
                self.send_header("location", provider.authorize(query))
                self.send_header("content-length", "0")
                self.end_headers()
            elif parts.path == "/jwks":
                self._json(200, provider.jwks())
            elif parts.path == "/userinfo":
                token = self.headers.get("authorization", "").removeprefix("Bearer ")
                claims = provider.tokens.get(token)
                self._json(200, claims) if claims else self._json(401, {"error": "invalid_token"})
            else:
                self._json(404, {})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
            form = {k: v[0] for k, v in parse_qs(body).items()}
            if urlsplit(self.path).path == "/token":
                self._json(*provider.token(form))
            else:
                self._json(404, {})

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    provider.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return provider, server
