"""Connections to model endpoints go only to checked addresses, pinned for the call."""

import socket
from collections.abc import Callable

import httpcore2
import httpx2
import pytest

from lmix.llm.base import LLMEndpointRefused, LLMUnavailable, Message
from lmix.llm.client import llm_complete
from lmix.llm.pinning import PinnedBackend, pinned_http_client
from lmix.llm.registry import provider_for
from lmix.models import LLMCall
from tests.fakes.llm_server import FakeLLMServer

PUBLIC = "93.184.216.34"
MESSAGES = [Message("user", "Hello?")]


@pytest.fixture(autouse=True)
def services_default(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public"]


class FakeDNS:
    """Answers for some names, in turn (the last one repeats); others resolve for real."""

    def __init__(self) -> None:
        self.answers: dict[str, list[list[str] | OSError]] = {}
        self.asked: list[str] = []

    def __call__(self, host, port, *args, **kwargs):
        if host not in self.answers:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        self.asked.append(host)
        queue = self.answers[host]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, OSError):
            raise answer
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answer
        ]


REAL_GETADDRINFO = socket.getaddrinfo


@pytest.fixture
def dns(monkeypatch) -> FakeDNS:
    fake = FakeDNS()
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


@pytest.fixture
def network(monkeypatch, fake_llm: FakeLLMServer) -> list[tuple[str, int]]:
    """Every TCP connection made, by address; the public test address leads to the fake."""
    connects: list[tuple[str, int]] = []
    real = httpcore2.SyncBackend.connect_tcp

    def connect_tcp(self, host, port, *args, **kwargs):
        connects.append((host, port))
        return real(self, "127.0.0.1" if host == PUBLIC else host, port, *args, **kwargs)

    monkeypatch.setattr(httpcore2.SyncBackend, "connect_tcp", connect_tcp)
    return connects


def test_a_rebound_name_still_connects_to_the_address_checked_for_the_call(
    dns, network, fake_llm, model_for: Callable
):
    port = int(fake_llm.root_url.rsplit(":", 1)[1])
    # Checked once as public; every later answer would lead to the server itself.
    dns.answers["llm.example.com"] = [[PUBLIC], ["127.0.0.1"]]
    fake_llm.queue(drop=True)  # the first connection dies: the SDK connects again
    model = model_for(api_endpoint=f"http://llm.example.com:{port}/v1")

    answer = llm_complete(model=model, messages=MESSAGES, purpose="test")

    assert answer.text
    assert dns.asked == ["llm.example.com"]
    assert len(network) >= 2 and set(network) == {(PUBLIC, port)}
    assert fake_llm.requests[-1].headers["host"] == f"llm.example.com:{port}"


def test_a_name_that_resolves_to_a_refused_address_is_never_connected_to(
    dns, network, fake_llm, model_for: Callable
):
    port = int(fake_llm.root_url.rsplit(":", 1)[1])
    dns.answers["llm.example.com"] = [["127.0.0.1"]]
    model = model_for(api_endpoint=f"http://llm.example.com:{port}/v1")

    with pytest.raises(LLMEndpointRefused) as refused:
        llm_complete(model=model, messages=MESSAGES, purpose="test")

    assert str(refused.value).startswith("llm.example.com resolves to a loopback address;")
    assert "127.0.0.1" not in str(refused.value)
    assert network == [] and fake_llm.requests == []
    assert LLMCall.objects.get().error == str(refused.value)


def test_a_literal_address_outside_the_policy_is_refused_before_the_sdk_runs(
    network, fake_llm, model_for: Callable
):
    model = model_for()  # the fake server: http://127.0.0.1:PORT/v1
    with pytest.raises(LLMEndpointRefused, match="127.0.0.1 is a loopback address"):
        llm_complete(model=model, messages=MESSAGES, purpose="test")
    assert network == [] and fake_llm.requests == []


@pytest.mark.parametrize("provider", ["openai_compatible", "anthropic"])
def test_a_refusal_at_connection_time_comes_through_the_sdk_as_itself(
    dns, network, fake_llm, config_for: Callable, provider
):
    port = int(fake_llm.root_url.rsplit(":", 1)[1])
    # Unresolvable when the client is built, loopback when the SDK connects.
    dns.answers["late.example.com"] = [socket.gaierror(socket.EAI_NONAME, "no"), ["127.0.0.1"]]
    config = config_for(provider, endpoint=f"http://late.example.com:{port}/v1", max_retries=0)

    with pytest.raises(LLMEndpointRefused, match="late.example.com resolves to a loopback"):
        provider_for(provider).complete(config, MESSAGES)
    assert network == [] and fake_llm.requests == []


def test_an_unresolvable_name_is_a_plain_connection_failure(dns, config_for: Callable):
    dns.answers["gone.example.com"] = [socket.gaierror(socket.EAI_NONAME, "no")]
    config = config_for("openai_compatible", endpoint="http://gone.example.com/v1", max_retries=0)
    with pytest.raises(LLMUnavailable) as caught:
        provider_for("openai_compatible").complete(config, MESSAGES)
    assert str(caught.value) == (
        "The provider at http://gone.example.com/v1 could not be reached: "
        "the host name did not resolve (DNS)."
    )


class RecordingStream(httpcore2.NetworkStream):
    """A connection that records what it is sent and answers one tiny HTTP response."""

    def __init__(self) -> None:
        self.sent = b""
        self.tls_server_hostname: str | None = None
        self._answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        answer, self._answer = self._answer, b""
        return answer

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.sent += buffer

    def close(self) -> None:
        pass

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        self.tls_server_hostname = server_hostname
        return self


def test_tls_and_the_host_header_still_name_the_host_while_tcp_goes_to_the_pinned_address(
    dns, monkeypatch
):
    dns.answers["llm.example.com"] = [[PUBLIC], ["10.0.0.1"]]
    connects: list[tuple[str, int]] = []
    stream = RecordingStream()

    def connect_tcp(self, host, port, *args, **kwargs):
        connects.append((host, port))
        return stream

    monkeypatch.setattr(httpcore2.SyncBackend, "connect_tcp", connect_tcp)
    with pinned_http_client("https://llm.example.com/v1", httpx2.Client) as client:
        assert client.get("https://llm.example.com/v1/models").text == "ok"

    assert connects == [(PUBLIC, 443)]
    assert stream.tls_server_hostname == "llm.example.com"
    assert b"\r\nHost: llm.example.com\r\n" in stream.sent


def test_a_redirect_to_another_host_is_checked_when_it_is_connected_to(dns):
    dns.answers["llm.example.com"] = [[PUBLIC]]
    dns.answers["inner.example.com"] = [["10.0.0.7"]]
    backend = PinnedBackend()
    backend.pin("llm.example.com", 443)
    with pytest.raises(LLMEndpointRefused, match="inner.example.com resolves to a private"):
        backend.connect_tcp("inner.example.com", 80)


def test_odd_notations_connect_to_the_address_they_mean(monkeypatch, settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "loopback"]
    connects: list[str] = []

    def connect_tcp(self, host, port, *args, **kwargs):
        connects.append(host)
        raise httpcore2.ConnectError("nothing listens in this test")

    monkeypatch.setattr(httpcore2.SyncBackend, "connect_tcp", connect_tcp)
    backend = PinnedBackend()
    for host in ("2130706433", "0177.0.0.1", "127.1", "::ffff:127.0.0.1"):
        with pytest.raises(httpcore2.ConnectError):
            backend.connect_tcp(host, 9)
    assert connects == ["127.0.0.1", "127.0.0.1", "127.0.0.1", "::ffff:127.0.0.1"]


@pytest.mark.parametrize("url", ["offline://narrator", "ftp://llm.example.com", "http://"])
def test_a_client_is_built_only_for_http_urls(url):
    with pytest.raises(LLMEndpointRefused):
        pinned_http_client(url, httpx2.Client)
