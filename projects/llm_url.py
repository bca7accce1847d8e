"""Which LLM endpoint addresses a project may point Penumbra at.

A lead types the base URL; the server then makes requests to it. Without a rule that is a server-side request
forgery: ``file:///etc/passwd``, the cloud metadata service at 169.254.169.254 (instance credentials), or services
on the host's private network. The rule, checked when the setting is saved and again before each generation run
(names can resolve differently later):
- only ``http`` and ``https`` with a host name;
- never link-local (169.254.0.0/16, fe80::/10), cloud metadata names and addresses, unspecified, multicast or
  reserved addresses, whatever the host name resolves to;
- loopback and private ranges (a local vLLM or Ollama) only when ``LLM_ALLOW_PRIVATE_URLS`` is on.
A name that does not resolve now is accepted at save time (nothing can be reached through it); the check before
generation resolves it again.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

METADATA_NAMES = frozenset({"metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
# Carrier-grade NAT space is not "private" to the ipaddress module but is no public endpoint either.
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class LLMURLRefused(ValueError):
    """The URL may not be used as an LLM endpoint; the message says why, for the lead."""


def _addresses(host: str) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def _refusal(address: IPAddress, *, allow_private: bool, private_setting: str) -> str | None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified or address.is_multicast:
        return "not a usable host address"
    if address.is_loopback or address.is_private or address in _SHARED_ADDRESS_SPACE:
        if not allow_private:
            return f"a loopback or private address (allowed only with {private_setting})"
        return None
    if address.is_reserved:
        return "not a usable host address"
    return None


def check_llm_base_url(
    url: str, *, allow_private: bool, private_setting: str = "LLM_ALLOW_PRIVATE_URLS", what: str = "an LLM endpoint"
) -> None:
    """Raise LLMURLRefused if ``url`` may not be an LLM endpoint. An empty URL (use the default) is fine.

    The same rule serves every address the server calls on a lead's word (webhooks pass their own ``what`` and the
    setting that opens private addresses to them)."""
    url = url.strip()
    if not url:
        return
    parts = urlsplit(url)
    if parts.scheme.lower() not in {"http", "https"}:
        raise LLMURLRefused("Expected an http:// or https:// URL.")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise LLMURLRefused("The URL has no host name.")
    if host in METADATA_NAMES:
        raise LLMURLRefused(f"{host} is a cloud metadata service, never {what}.")
    for address in _addresses(host):
        reason = _refusal(address, allow_private=allow_private, private_setting=private_setting)
        if reason is not None:
            shown = host if host == str(address) else f"{host} ({address})"
            raise LLMURLRefused(f"{shown} is {reason}.")
