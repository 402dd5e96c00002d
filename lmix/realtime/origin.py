"""Websocket origin check: a socket opens only from an allowed (scheme, host, port).

Channels' `AllowedHostsOriginValidator` compares host names only, so `http://` pages on
another port of the same host, or plain-http pages of an https site, could open sockets
with the user's session cookie. `OriginValidator` here accepts an `Origin` only when its
scheme, host and port all equal one of:

- the origin the handshake itself came to (same-origin): the `Host` header, if its host
  is in ALLOWED_HOSTS, with ws mapped to http and wss to https; SECURE_PROXY_SSL_HEADER,
  when set, tells a TLS proxy's ws from plain ws, as it does for Django's `is_secure()`;
- an origin listed in CSRF_TRUSTED_ORIGINS (`https://*.example.org` allows subdomains,
  as it does for Django's CSRF check).

Default ports are normalised (http 80, https 443), so `http://host` equals `http://host:80`.
docs/security.md ("Websocket origins") explains it; tests/lmix/test_origin.py tests it.
"""

import logging
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

logger = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}
SOCKET_SCHEMES = {"ws": "http", "wss": "https"}


class Origin(NamedTuple):
    """A web origin with its port made explicit; the host is lowercase, IPv6 unbracketed."""

    scheme: str
    host: str
    port: int


def parse_origin(value: str) -> Origin | None:
    """The origin `value` names (`https://example.org`, `http://[::1]:8000`), or None when
    it names none: `null`, another scheme, no host, a bad port."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return Origin(scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme])


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    """The one value of header `name`; None when it is absent, repeated or not latin-1."""
    values = [value for key, value in scope.get("headers", []) if key.lower() == name]
    if len(values) != 1:
        return None
    try:
        return values[0].decode("latin-1")
    except UnicodeDecodeError:
        return None


def _request_scheme(scope: dict[str, Any]) -> str:
    """http or https: what the page's origin must say for the socket to be same-origin."""
    scheme = SOCKET_SCHEMES.get(scope.get("scheme", "ws"), "http")
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        header, secure_value = proxy
        name = header.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")
        value = _header(scope, name)
        if value is not None:
            return "https" if value.split(",", 1)[0].strip() == secure_value else "http"
    return scheme


def _allowed_hosts() -> list[str]:
    """ALLOWED_HOSTS, with Django's own fallback for DEBUG with none set."""
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def same_origin(scope: dict[str, Any]) -> Origin | None:
    """The origin the handshake came to, if its `Host` is one of ALLOWED_HOSTS."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    return parse_origin(f"{_request_scheme(scope)}://{host}")


def trusted_origin_allows(origin: Origin) -> bool:
    """Whether CSRF_TRUSTED_ORIGINS lists `origin`, exactly or as `scheme://*.domain`."""
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        wildcard = "://*." in entry
        trusted = parse_origin(entry.replace("://*.", "://", 1) if wildcard else entry)
        if trusted is None or (trusted.scheme, trusted.port) != (origin.scheme, origin.port):
            continue
        if origin.host == trusted.host or (
            wildcard and is_same_domain(origin.host, "." + trusted.host)
        ):
            return True
    return False


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the handshake's `Origin` is the same origin or a trusted one.

    A handshake without an `Origin` is refused. Sockets authenticate with the session
    cookie, and the attack this check stops (a page of another site opening a socket as
    its visitor) always comes from a browser, which always sends `Origin` on a websocket
    handshake; clients that send none are scripts, and a script can send one. Refusing
    keeps the rule one line long and closed by default, as Channels' validator does.
    """
    header = _header(scope, b"origin")
    origin = parse_origin(header) if header is not None else None
    if origin is None:
        return False
    return origin == same_origin(scope) or trusted_origin_allows(origin)


class OriginValidator:
    """ASGI middleware: hand an allowed websocket to `application`, refuse the rest (403)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("OriginValidator only guards websocket connections.")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        # Says why a socket behind a misconfigured proxy fails; an origin is no secret.
        logger.info(
            "websocket refused: origin %r not allowed for host %r",
            (_header(scope, b"origin") or "")[:200],
            (_header(scope, b"host") or "")[:200],
        )
        return await WebsocketDenier()(scope, receive, send)
