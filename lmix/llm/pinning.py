"""HTTP clients for model endpoints that connect only where the endpoint policy allows.

Every adapter builds its SDK client on `pinned_http_client`: the endpoint's host is
resolved once, every address it resolved to is checked (lmix/llm/network_policy.py), and
every connection of that call to that host goes to those checked addresses, so a DNS
answer that changes between the check and the connection (rebinding) cannot move it. Any
other host (a redirect) is resolved and checked the same way when it is first connected
to. Only the TCP connection is pinned: the Host header, TLS SNI and certificate checks
still use the host name.
"""

import contextlib
import logging
import socket
import ssl
from collections.abc import Iterable
from functools import cache
from typing import TypeVar

import httpcore2
import httpx2

from .base import LLMEndpointRefused
from .network_policy import SCHEMES, InvalidHost, address_refusal, host_address

log = logging.getLogger("lmix.llm")
C = TypeVar("C", bound=httpx2.Client)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def resolve(host: str, port: int) -> list[str]:
    """The addresses to connect to for `host`: itself when it is an address (in whatever
    notation), else what the resolver answers, in its order.

    Raises:
        InvalidHost: a number-like host that is no valid address.
        OSError: the name does not resolve.
    """
    address = host_address(host)
    if address is not None:
        # An IPv6 literal is connected to as written (a NAT64 or mapped form must stay
        # IPv6 on the wire); other notations of IPv4 as the plain dotted quad.
        return [host.strip("[]")] if ":" in host else [str(address)]
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class NameNotResolved(httpcore2.ConnectError):
    """The endpoint's host name did not resolve (DNS), told apart for the user's message."""


class PinnedBackend(httpcore2.NetworkBackend):
    """httpcore's network backend, connecting each host only to its checked addresses."""

    def __init__(self, pins: dict[str, list[str]] | None = None) -> None:
        self._pins = pins if pins is not None else {}
        self._network = httpcore2.SyncBackend()

    def pin(self, host: str, port: int) -> list[str]:
        """Resolve `host` once and check every address; later connections go there.

        Raises:
            LLMEndpointRefused: the host, or any address it resolved to, is not allowed.
            OSError: the name does not resolve (nothing is pinned).
        """
        host = host.lower()
        if host not in self._pins:
            try:
                addresses = resolve(host, port)
            except InvalidHost:
                message = "The endpoint's host is not a valid address or name."
                raise LLMEndpointRefused(message) from None
            refusal = address_refusal(host, addresses)
            if refusal:
                log.warning("Model endpoint refused: %s", refusal)
                raise LLMEndpointRefused(refusal)
            self._pins[host] = addresses
        return self._pins[host]

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        try:
            addresses = self.pin(host, port)
        except OSError:
            raise NameNotResolved("The host name did not resolve.") from None
        failure: httpcore2.ConnectError | None = None
        for address in addresses:
            try:
                return self._network.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore2.ConnectError as error:
                failure = error
        raise failure or httpcore2.ConnectError("The host name resolved to no address.")


@cache
def _ssl_context() -> ssl.SSLContext:
    # Building one costs ~40 ms (it loads the CA bundle); a context is safe to share.
    return httpx2.create_ssl_context()


class PinnedTransport(httpx2.HTTPTransport):
    """httpx2's own transport over a connection pool that connects through `backend`."""

    def __init__(self, backend: PinnedBackend) -> None:
        super().__init__(verify=_ssl_context())
        # HTTPTransport takes no network backend, so its pool is replaced by one built the
        # same way with ours; everything else (requests, errors, streams) stays httpx2's.
        self._pool = httpcore2.ConnectionPool(
            ssl_context=_ssl_context(), keepalive_expiry=5.0, network_backend=backend
        )


def pinned_http_client(
    url: str, client_class: type[C], pins: dict[str, list[str]] | None = None
) -> C:
    """A `client_class` (an SDK's DefaultHttpxClient, to keep its defaults) for calls to
    `url`, whose host has been resolved and checked here, before any request.

    Args:
        pins: the hosts already pinned for this call (CallConfig.pins): a call tried again
            with a new client connects where its first try was checked to.

    Raises:
        LLMEndpointRefused: the URL is no http(s) URL, or its host is not allowed.
    """
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL:
        raise LLMEndpointRefused("The endpoint is not a valid URL.") from None
    if parsed.scheme not in SCHEMES or not parsed.host:
        raise LLMEndpointRefused("Model endpoints must be http:// or https:// URLs.")
    backend = PinnedBackend(pins)
    # Unresolvable now, it is resolved and checked again when connecting (and the SDK's
    # retries apply). The host is pinned as httpcore asks for it: IDNA, IPv6 unbracketed.
    with contextlib.suppress(OSError):
        backend.pin(parsed.raw_host.decode("ascii"), parsed.port or _DEFAULT_PORTS[parsed.scheme])
    return client_class(transport=PinnedTransport(backend))
