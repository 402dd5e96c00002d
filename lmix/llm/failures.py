"""Typed errors built from what failed (status, timeout, network), never from SDK text."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

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

log = logging.getLogger("lmix.llm")


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


def _typed(sdk: SDKErrors, exc: Exception) -> LLMError:
    refusal = _refusal_under(exc)
    if refusal is not None:
        return refusal
    if isinstance(exc, sdk.timeout | httpx2.TimeoutException):
        return LLMTimeout()
    if isinstance(exc, sdk.status):
        return from_status(exc.status_code)  # type: ignore[attr-defined]
    return LLMUnavailable()  # connection errors, bad responses, broken streams


@contextmanager
def translated(sdk: SDKErrors, provider: str, what: str) -> Iterator[None]:
    """Turn an SDK's exceptions into typed errors, dropping the SDK's text and traceback chain."""
    try:
        yield
    except LLMError:
        raise
    except (sdk.base, httpx2.HTTPError, ValueError) as exc:
        raise failed(provider, what, _typed(sdk, exc)) from None
