"""Typed errors built from what failed (status, timeout, network), never from SDK text."""

import logging
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx2  # the transport under both SDKs; mid-stream failures surface as its errors

from .base import (
    LLMAuthError,
    LLMBadRequest,
    LLMEndpointRefused,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
)
from .pinning import NameNotResolved

log = logging.getLogger("lmix.llm")
# Longer waits than this are not worth holding a turn for: our own backoff applies.
MAX_RETRY_AFTER = 30.0


def from_status(status: int) -> LLMError:
    """The typed error for an HTTP status. SDK messages can echo response bodies (and a
    pasted key with them), so the message is ours: the class's text plus the status."""
    if status in (401, 403):
        error: LLMError = LLMAuthError()
    elif status == 429:
        error = LLMRateLimited()
    elif status == 408 or status >= 500:
        error = LLMUnavailable()
    else:
        error = LLMBadRequest()
    error.status = status  # type: ignore[attr-defined]
    if str(status) not in error.user_message:
        error.args = (f"{error.user_message} (HTTP {status})",)
    return error


def failed(provider: str, what: str, error: LLMError) -> LLMError:
    """Log a failure without its details (they may hold prompt text) and return the error."""
    log.warning(
        "LLM %s failed: provider=%s error=%s status=%s",
        what,
        provider,
        type(error).__name__,
        getattr(error, "status", "-"),
    )
    return error


@dataclass(frozen=True)
class SDKErrors:
    """The exception classes of one SDK that `translated` needs to tell failures apart."""

    base: type[Exception]
    timeout: type[Exception]
    status: type[Exception]  # has .status_code


def _refusal_under(exc: BaseException) -> LLMEndpointRefused | None:
    """The endpoint policy's refusal at connection time (lmix/llm/pinning.py), which the SDK
    wraps in its own connection error."""
    link: BaseException | None = exc
    for _ in range(10):  # a chain is short; a cyclic one must not hang us
        if link is None or isinstance(link, LLMEndpointRefused):
            break
        link = link.__cause__ or link.__context__
    return link if isinstance(link, LLMEndpointRefused) else None


def shown_endpoint(endpoint: str) -> str:
    """The endpoint as an error may name it: scheme, host, port and path, never the
    user:password part, query or fragment (where a key could have been pasted)."""
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "the endpoint"
    if not parts.scheme or not host:
        return "the endpoint"
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and what it was raised from, outermost first (a cycle stops it)."""
    link: BaseException | None = exc
    for _ in range(10):
        if link is None:
            return
        yield link
        link = link.__cause__ or link.__context__


def connection_cause(exc: BaseException) -> str:
    """Why a connection failed, in a few words, from the exception types under the SDK's
    (never from their text, which may echo a request)."""
    for link in _chain(exc):
        if isinstance(link, NameNotResolved | socket.gaierror):
            return "the host name did not resolve (DNS)"
        if isinstance(link, ssl.SSLError):
            return "the TLS handshake failed"
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, TimeoutError | httpx2.TimeoutException):
            return "timed out"
    for link in _chain(exc):
        # Some stacks hand us only the errno text: recognise the usual ones.
        text = str(link).lower()
        if "connection refused" in text or "errno 111" in text or "errno 61" in text:
            return "connection refused"
        if "certificate verify failed" in text:
            return "the TLS handshake failed"
        if "name or service not known" in text or "nodename nor servname" in text:
            return "the host name did not resolve (DNS)"
    if any(isinstance(link, httpx2.RemoteProtocolError) for link in _chain(exc)):
        return "the connection was closed mid-answer"
    return "the connection failed"


def not_found(provider: str, endpoint: str) -> str:
    """What a 404 means; OpenAI-compatible servers serve under /v1, which users leave out."""
    where = shown_endpoint(endpoint)
    said = f"The server answered 404 (not found) at {where}."
    if provider in ("openai", "openai_compatible") and "/v1" not in urlsplit(endpoint).path:
        return f"{said} OpenAI-compatible servers usually serve under /v1: try {where}/v1."
    return f"{said} Check the endpoint and the model id."


def _retry_after(exc: Exception) -> float | None:
    """The seconds a 429/503 asks us to wait, when it says (and it is not absurd)."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            seconds = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            seconds = float(headers["retry-after"])
        else:
            return None
    except ValueError:
        return None  # an HTTP date: our own backoff will do
    return seconds if 0 <= seconds <= MAX_RETRY_AFTER else None


def _typed(sdk: SDKErrors, exc: Exception, endpoint: str, provider: str) -> LLMError:
    refusal = _refusal_under(exc)
    if refusal is not None:
        return refusal
    where = shown_endpoint(endpoint)
    if isinstance(exc, sdk.timeout | httpx2.TimeoutException):
        return LLMTimeout(f"The provider at {where} did not answer in time (timeout).")
    if isinstance(exc, sdk.status):
        status = exc.status_code  # type: ignore[attr-defined]
        error = from_status(status)
        if isinstance(error, LLMUnavailable):  # the server is there but failing: say which
            error.args = (f"The provider at {where} failed (HTTP {status}).",)
        elif status == 404:
            error.args = (not_found(provider, endpoint),)
        error.retry_after = _retry_after(exc)  # type: ignore[attr-defined]
        return error
    # Connection errors, bad responses, broken streams.
    return LLMUnavailable(f"The provider at {where} could not be reached: {connection_cause(exc)}.")


@contextmanager
def translated(sdk: SDKErrors, provider: str, what: str, *, endpoint: str) -> Iterator[None]:
    """Turn an SDK's exceptions into typed errors, dropping the SDK's text and traceback chain.

    Args:
        endpoint: the base URL called; the error names it (without any credentials in it)
            and why the call failed: the HTTP status, a timeout, or the connection's cause.
    """
    try:
        yield
    except LLMError:
        raise
    except (sdk.base, httpx2.HTTPError, ValueError) as exc:
        raise failed(provider, what, _typed(sdk, exc, endpoint, provider)) from None
