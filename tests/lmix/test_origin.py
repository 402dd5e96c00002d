"""The websocket origin check (lmix/realtime/origin.py): scheme, host and port must all match
the page the socket came from, or an origin in CSRF_TRUSTED_ORIGINS."""

from typing import Any

import pytest
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator

from config.asgi import application
from lmix.realtime.codes import CLOSE_UNAUTHENTICATED
from lmix.realtime.origin import OriginValidator, parse_origin


class Accepting(AsyncWebsocketConsumer):
    """A consumer that opens every socket it is handed."""

    async def connect(self) -> None:
        await self.accept()


@pytest.fixture(autouse=True)
def hosts(settings):
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]
    settings.CSRF_TRUSTED_ORIGINS = []
    settings.SECURE_PROXY_SSL_HEADER = None


async def opens(
    origin: str | None, host: str, *, scheme: str = "ws", extra: list[tuple[bytes, bytes]] = ()
) -> bool:
    """Whether a handshake with these headers, guarded by the validator, is accepted."""
    inner = OriginValidator(Accepting.as_asgi())

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        return await inner({**scope, "scheme": scheme}, receive, send)

    headers = [(b"host", host.encode())] + list(extra)
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    communicator = WebsocketCommunicator(app, "/ws/anything/", headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    await communicator.disconnect()
    return connected


async def test_the_same_origin_opens():
    assert await opens("http://localhost:8000", "localhost:8000")
    assert await opens("https://localhost", "localhost", scheme="wss")


async def test_default_ports_are_normalised():
    assert await opens("http://localhost", "localhost:80")
    assert await opens("http://localhost:80", "localhost")
    assert await opens("https://localhost:443", "localhost", scheme="wss")


async def test_another_scheme_is_refused():
    assert not await opens("https://localhost:8000", "localhost:8000")
    assert not await opens("http://localhost", "localhost", scheme="wss")


async def test_another_port_is_refused():
    assert not await opens("http://localhost:5173", "localhost:8000")
    assert not await opens("http://localhost:8000", "localhost")


async def test_another_host_is_refused():
    assert not await opens("http://evil.example:8000", "localhost:8000")
    assert not await opens("http://127.0.0.1:8000", "localhost:8000")


async def test_a_host_outside_allowed_hosts_is_refused_even_as_its_own_origin():
    assert not await opens("http://evil.example", "evil.example")


async def test_an_ipv6_host_opens():
    assert await opens("http://[::1]:8000", "[::1]:8000")
    assert not await opens("http://[::1]:8001", "[::1]:8000")


async def test_a_trusted_origin_opens_with_its_own_scheme_and_port(settings):
    # Behind a TLS proxy: the socket reaches daphne as ws://127.0.0.1:8000.
    settings.CSRF_TRUSTED_ORIGINS = ["https://lmix.example.org"]
    assert await opens("https://lmix.example.org", "127.0.0.1:8000")
    assert await opens("https://lmix.example.org:443", "127.0.0.1:8000")
    assert not await opens("http://lmix.example.org", "127.0.0.1:8000")
    assert not await opens("https://lmix.example.org:8443", "127.0.0.1:8000")
    assert not await opens("https://other.example.org", "127.0.0.1:8000")


async def test_a_wildcard_trusted_origin_opens_for_subdomains(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://*.example.org"]
    assert await opens("https://play.example.org", "127.0.0.1:8000")
    assert not await opens("https://play.example.org.evil.example", "127.0.0.1:8000")
    assert not await opens("https://notexample.org", "127.0.0.1:8000")


@pytest.mark.parametrize(
    "extra",
    [
        [],  # no Origin at all
        [(b"origin", b"null")],
        [(b"origin", b"file://")],
        [(b"origin", b"http://localhost:8000"), (b"origin", b"http://evil.example")],
        [(b"origin", b"http://localhost:99999")],
    ],
    ids=["missing", "null", "file", "repeated", "bad-port"],
)
async def test_a_missing_or_unusable_origin_is_refused(extra):
    assert not await opens(None, "localhost:8000", extra=extra)


async def test_a_missing_host_is_refused():
    assert not await opens("http://localhost:8000", "", extra=[])


async def test_a_tls_proxy_header_counts_only_when_configured(settings):
    forwarded = [(b"x-forwarded-proto", b"https")]
    assert not await opens("https://localhost", "localhost", extra=forwarded)
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert await opens("https://localhost", "localhost", extra=forwarded)
    assert not await opens("http://localhost", "localhost", extra=forwarded)


def test_origins_are_parsed_to_scheme_host_and_port():
    assert parse_origin("HTTP://LocalHost") == ("http", "localhost", 80)
    assert parse_origin("https://[::1]:8443") == ("https", "::1", 8443)
    assert parse_origin("ws://localhost") is None
    assert parse_origin("null") is None


async def real_socket(origin: str, host: str) -> tuple[bool, Any]:
    """A handshake against the real ASGI application (no session: anonymous)."""
    headers = [(b"origin", origin.encode()), (b"host", host.encode())]
    path = "/ws/productions/00000000-0000-0000-0000-000000000000/"
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await communicator.connect(timeout=5)
    closed = await communicator.receive_output(timeout=5) if connected else None
    await communicator.disconnect()
    return connected, closed


async def test_the_application_checks_scheme_host_and_port():
    # Past the origin check, an anonymous socket is opened and closed with 4401.
    connected, closed = await real_socket("http://localhost:8000", "localhost:8000")
    assert connected and closed["code"] == CLOSE_UNAUTHENTICATED
    for origin in ("http://localhost:5173", "https://localhost:8000", "http://evil:8000"):
        connected, _ = await real_socket(origin, "localhost:8000")
        assert not connected, origin
