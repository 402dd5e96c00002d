"""The LLM calls the app makes: each picks the adapter for a model and records an LLMCall."""

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import Any

import pydantic
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..crypto import UnreadableSecret
from ..models import LLMCall, LLMModel
from . import structured
from .base import (
    CallConfig,
    Completion,
    LLMAuthError,
    LLMBadRequest,
    LLMEmptyAnswer,
    LLMEndpointRefused,
    LLMError,
    LLMInvalidOutput,
    LLMTimeout,
    Message,
    StructuredMode,
    T,
    Usage,
)
from .endpoints import infer_provider, normalize_endpoint
from .failures import failed, shown_endpoint
from .meter import budget_key, meter_add
from .negotiation import negotiated
from .params import request_params, validate_params
from .patience import Retries, paced
from .registry import provider_for
from .slots import slot_held, slots_for
from .tokens import count_message_tokens, count_tokens

log = logging.getLogger("lmix.llm")
# Below this many seconds left, a connection test's fallback call is not worth starting.
MIN_FALLBACK_SECONDS = 0.5


def params_for(model: LLMModel, overrides: dict | None = None) -> dict[str, Any]:
    """The settings of a call: the model's config, then `overrides`, validated (prompt-only
    ones included).

    Raises:
        LLMBadRequest: a stored setting is invalid; the message names which.
    """
    stored = model.config if isinstance(model.config, dict) else {}
    try:
        return validate_params({**stored, **(overrides or {})})
    except pydantic.ValidationError as error:
        fields = sorted({".".join(map(str, e["loc"])) or "config" for e in error.errors()})
        raise LLMBadRequest(f"The model's settings are invalid: {', '.join(fields)}.") from None


def call_config_for(
    model: LLMModel,
    overrides: dict | None = None,
    *,
    timeout: float | None = None,
    variant: int = 0,
    context: object = None,
) -> CallConfig:
    """The model's endpoint, key and parameters (its config, then `overrides`), validated;
    prompt-only settings (`context_size`...) are not among the parameters sent. The SDK
    does not retry: the calls below do (lmix/llm/patience.py)."""
    params = request_params(params_for(model, overrides))
    try:
        api_key = model.api_key
    except UnreadableSecret as error:
        # No provider is called: it would only answer 401, and hide what to do.
        raise LLMAuthError(error.message) from None
    return CallConfig(
        provider=model.provider,
        endpoint=normalize_endpoint(model.api_endpoint),
        model_id=model.model_id,
        api_key=api_key,
        params=params,
        timeout=timeout or settings.LLM_TIMEOUT_SECONDS,
        connect_timeout=settings.LLM_CONNECT_TIMEOUT_SECONDS,
        max_retries=0,
        variant=variant,
        context=context,
    )


# Told how many calls go before this one at its model's server, while it waits (and 0
# once it is sent); `wanted`, asked every second meanwhile, says whether its work still
# wants it (no: LLMCancelled, never sent). lmix/llm/slots.py.
Waiting = Callable[[int], None]


@contextmanager
def _in_turn(
    model: LLMModel,
    purpose: str,
    subject: str,
    waiting: Waiting | None,
    wanted: Callable[[], bool] | None,
) -> Iterator[None]:
    """One of the model's server's slots, waited for and held for the block: the call's
    record, timeouts and retries start once it is its turn (`wanted`: see slot_held)."""

    def api_key() -> str:
        try:
            return model.api_key
        except UnreadableSecret:
            return ""

    config = model.config if isinstance(model.config, dict) else {}
    slots = slots_for(model.provider, model.api_endpoint, config, api_key)
    with slot_held(
        endpoint=model.api_endpoint,
        slots=slots,
        purpose=purpose,
        subject=subject,
        waiting=waiting,
        wanted=wanted,
    ):
        yield


def _record_start(row: dict[str, Any]) -> LLMCall | None:
    try:
        return LLMCall.objects.create(**row)
    except Exception:
        # A lost diagnostics row must not turn a good answer into a failure.
        log.warning("Could not record an LLM call (%s/%s)", row["kind"], row["purpose"])
        return None


def _record_end(call: LLMCall | None, row: dict[str, Any]) -> None:
    try:
        if call is None:
            LLMCall.objects.create(**row)
        else:
            LLMCall.objects.filter(pk=call.pk).update(**row)
    except Exception:
        log.warning("Could not record an LLM call (%s/%s)", row["kind"], row["purpose"])


@contextmanager
def _recorded(
    *,
    kind: str,
    purpose: str,
    usage: Usage,
    model: LLMModel | None = None,
    provider: str = "",
    model_id: str = "",
    owner: Any = None,
    messages: list[Message] | None = None,
    received: list[str] | None = None,
    subject: str = "",
) -> Iterator[dict[str, Any]]:
    """Time the block and record it as an LLMCall, whether it succeeds, fails or is closed.

    The row is written before the call (unfinished) and completed after it, so a call cut
    off by a dead worker still shows, without `finished_at`. The block may add to the row it
    is given (the parameters, once validated)."""
    row: dict[str, Any] = {
        "owner_id": model.owner_id if model is not None else getattr(owner, "pk", None),
        "llm_model": model,
        "provider": model.provider if model is not None else provider,
        "model_id": (model.model_id if model is not None else model_id)[:200],
        "purpose": purpose[:64],
        "subject": subject[:64],
        "kind": kind,
    }
    call = _record_start(row)
    # Every call counts against its subject's budget (a frame's: synthesis/budget.py),
    # admitted or not: the budget is the callers' to check before they start work.
    budget = budget_key(subject)
    if budget:
        meter_add(budget, calls=1)
    started = time.monotonic()
    error = ""
    try:
        yield row
    except LLMError as exc:
        error = str(exc)
        raise
    except Exception as exc:
        # Adapters type every SDK failure, so this is a bug of ours: log it (no SDK text can
        # be in it), record it, and give callers the one error type they handle.
        log.exception("Unexpected failure in an LLM %s call", kind)
        error = LLMError.user_message
        raise LLMError() from exc
    finally:
        if received and not usage.completion_tokens:  # a stream cut short: count what came
            usage.completion_tokens = count_tokens("".join(received))
            usage.prompt_tokens = usage.prompt_tokens or count_message_tokens(messages or [])
        row.update(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            latency_ms=round((time.monotonic() - started) * 1000),
            error=error,
            finished_at=timezone.now(),
        )
        _record_end(call, row)
        if budget:
            meter_add(budget, tokens=usage.prompt_tokens + usage.completion_tokens)


def llm_complete(
    *,
    model: LLMModel,
    messages: list[Message],
    purpose: str,
    overrides: dict | None = None,
    subject: str = "",
    context: object = None,
    waiting: Waiting | None = None,
    wanted: Callable[[], bool] | None = None,
) -> Completion:
    """The whole text of one completion. `context`: what the prompt was compiled from, for
    the offline narrator (CallConfig.context).

    Raises:
        LLMEmptyAnswer: the model answered no text, twice.
    """
    usage = Usage()
    with (
        _in_turn(model, purpose, subject, waiting, wanted),
        _recorded(
            kind="complete", purpose=purpose, usage=usage, model=model, subject=subject
        ) as row,
    ):
        config = call_config_for(model, overrides, context=context)
        row["params"] = config.params
        provider = provider_for(config.provider)
        retries = Retries()
        while True:
            try:
                completion = provider.complete(config, messages)
                usage.prompt_tokens = completion.usage.prompt_tokens
                usage.completion_tokens = completion.usage.completion_tokens
                if not completion.text.strip():
                    raise failed(config.provider, "complete", LLMEmptyAnswer())
                return completion
            except LLMError as error:
                if not retries.again(error):
                    raise


def llm_stream(
    *,
    model: LLMModel,
    messages: list[Message],
    purpose: str,
    overrides: dict | None = None,
    usage: Usage | None = None,
    variant: int = 0,
    subject: str = "",
    context: object = None,
    waiting: Waiting | None = None,
    wanted: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Text deltas as they arrive; `usage` is filled when the stream ends (or is closed).
    `variant` numbers repeated takes of the same prompt and `context` holds what it was
    compiled from (see CallConfig); `subject` names the record the call belongs to (see
    LLMCall.subject).

    Leading whitespace is held back until text comes, so a stream that is tried again
    (it failed or stayed empty before any text) has yielded nothing; one that yielded text
    is never tried again.

    Raises:
        LLMTimeout: no text within LLM_FIRST_TOKEN_TIMEOUT_SECONDS, or none for
            LLM_BETWEEN_TOKENS_TIMEOUT_SECONDS after some (the message says which).
        LLMEmptyAnswer: the stream ended with no text, twice.
    """
    usage = usage if usage is not None else Usage()
    received: list[str] = []
    first = settings.LLM_FIRST_TOKEN_TIMEOUT_SECONDS
    between = settings.LLM_BETWEEN_TOKENS_TIMEOUT_SECONDS
    with (
        _in_turn(model, purpose, subject, waiting, wanted),
        _recorded(
            kind="stream",
            purpose=purpose,
            usage=usage,
            model=model,
            messages=messages,
            received=received,
            subject=subject,
        ) as row,
    ):
        # The HTTP read timeout only ends an abandoned reader; `paced` keeps the time.
        config = call_config_for(
            model, overrides, variant=variant, timeout=first + between, context=context
        )
        row["params"] = config.params
        provider = provider_for(config.provider)
        retries = Retries()
        while True:
            held: list[str] = []
            try:
                deltas = paced(
                    lambda: provider.stream(config, messages, usage),
                    first=first,
                    between=between,
                    where=shown_endpoint(config.endpoint),
                    provider=config.provider,
                )
                # closing(): when our caller stops early, the HTTP stream ends now, not at GC.
                with closing(deltas):
                    for delta in deltas:
                        if not received and not delta.strip():
                            held.append(delta)
                            continue
                        delta, held = "".join(held) + delta, []
                        received.append(delta)
                        yield delta
                if not received:
                    raise failed(config.provider, "stream", LLMEmptyAnswer())
                return
            except LLMError as error:
                if received or not retries.again(error):
                    raise


def llm_structured(
    *,
    model: LLMModel,
    messages: list[Message],
    schema: type[T],
    purpose: str,
    overrides: dict | None = None,
    default: T | None = None,
    subject: str = "",
    max_tokens: int | None = None,
    check: Callable[[T], None] | None = None,
    tries: list[dict] | None = None,
    wire: dict | None = None,
    context: object = None,
    waiting: Waiting | None = None,
    wanted: Callable[[], bool] | None = None,
) -> T:
    """An instance of `schema`; on output that will not validate, `default` if given.

    A model's first structured call finds how it takes them (its adapter's modes in order,
    moving on when the server refuses a request's shape) and remembers the one that worked
    in its config's `structured_mode`; later calls use that one only. An answer whose only
    fault is numbers outside their fields' bounds is repaired: each clamped to the nearest
    value inside (lmix/llm/bounds.py) and noted on its try. An answer that still does not
    validate, or that `check` refuses, is sent back once with what was wrong.

    Args:
        max_tokens: the answer's budget, sized by the caller to its schema; the model's
            `structured_max_tokens` wins; else settings.LLM_STRUCTURED_MAX_TOKENS.
        check: raises ValueError(why) when a schema-valid answer is still wrong; counted
            like a validation failure.
        wire: the JSON schema sent instead of `schema`'s own, tighter for this call (its
            exact names, say), so a server that constrains its output to it (json_schema,
            a llama.cpp grammar) cannot answer otherwise; the answer is still validated as
            `schema`.
        context: what the prompt was compiled from, for the offline narrator (a schema's
            `offline_answer` reads it; see CallConfig).
        tries: given, one dict per model call is appended, whatever its outcome:
            {"mode", "messages" (as sent, schema instruction included; a forced tool as a
            "note"), "raw" (the answer's text), "error" ("" or why it failed), and, when
            numbers were clamped to read it, "repaired": [{"path", "given", "used"}]}.

    Raises:
        LLMInvalidOutput: no valid answer after the repair (without `default`); the message
            ends with the first problem, in one short line.
    """
    usage = Usage()
    try:
        with (
            _in_turn(model, purpose, subject, waiting, wanted),
            _recorded(
                kind="structured", purpose=purpose, usage=usage, model=model, subject=subject
            ) as row,
        ):
            params = params_for(model, overrides)
            budget = (
                params.get("structured_max_tokens")
                or max_tokens
                or settings.LLM_STRUCTURED_MAX_TOKENS
            )
            config = call_config_for(
                model, {**(overrides or {}), "max_tokens": budget}, context=context
            )
            row["params"] = config.params
            return negotiated(
                config,
                messages,
                schema,
                usage,
                stored=params.get("structured_mode"),
                remember=lambda mode: _remember_mode(model, mode),
                check=check,
                tries=tries,
                wire=wire,
            )
    except LLMInvalidOutput:
        if default is None:
            raise
        return default


def _remember_mode(model: LLMModel, mode: StructuredMode) -> None:
    """Store how the model took a structured call, merged into its current config (an edit
    made meanwhile keeps its other keys). The offline narrator's own way is not a setting."""
    if mode not in structured.STORED_MODES or model.pk is None:
        return
    try:
        with transaction.atomic():
            current = (
                LLMModel.objects.select_for_update()
                .filter(pk=model.pk)
                .values_list("config", flat=True)
                .first()
            )
            config = {**(current if isinstance(current, dict) else {}), "structured_mode": mode}
            LLMModel.objects.filter(pk=model.pk).update(config=config)
    except Exception:
        # Not remembered, the next call negotiates again: slower, never wrong.
        log.warning("Could not store the structured mode of model %s", model.pk)
        return
    if isinstance(model.config, dict):
        model.config = {**model.config, "structured_mode": mode}


def _list_models(config: CallConfig, owner: Any) -> list[str]:
    with _recorded(
        kind="list_models",
        purpose="list_models",
        usage=Usage(),
        provider=config.provider,
        model_id="",
        owner=owner,
    ):
        return provider_for(config.provider).list_models(config)


def llm_list_models(
    *,
    provider: str,
    endpoint: str,
    api_key: str = "",
    timeout: float | None = None,
    owner: Any = None,
) -> list[str]:
    """The model ids an endpoint offers."""
    config = CallConfig(
        provider=provider,
        endpoint=normalize_endpoint(endpoint),
        model_id="",
        api_key=api_key,
        timeout=timeout or settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )
    return _list_models(config, owner)


def llm_test(
    *,
    provider: str | None,
    endpoint: str,
    api_key: str = "",
    model_id: str = "",
    owner: Any = None,
) -> dict[str, Any]:
    """A real round trip: list the models, or, where listing is not offered, a one-token
    completion of `model_id`. Never raises for a provider's failure; `error` is safe to show.

    Raises:
        LLMEndpointRefused: the endpoint is outside LMIX_LLM_ALLOWED_NETWORKS; a refused
            address is never connected to, so the test reveals nothing about it.
    """
    started = time.monotonic()
    limit = settings.LLM_TEST_TIMEOUT_SECONDS

    def result(**fields: Any) -> dict[str, Any]:
        return {"latency_ms": round((time.monotonic() - started) * 1000), **fields}

    endpoint = normalize_endpoint(endpoint)
    provider = provider or infer_provider(endpoint)
    # No retries: a test answers now, within its time limit.
    config = CallConfig(provider, endpoint, model_id, api_key, timeout=limit, max_retries=0)
    try:
        return result(ok=True, models=_list_models(config, owner))
    except LLMEndpointRefused:
        raise
    except LLMError as error:
        failure = error
    # A key refused or a server silent won't do better for a completion; a missing or odd
    # /models (404, 405, 5xx, unparsable) might.
    unreachable = isinstance(failure, LLMAuthError | LLMTimeout) or (
        not hasattr(failure, "status") and not isinstance(failure, LLMInvalidOutput)
    )
    remaining = limit - (time.monotonic() - started)
    if not model_id or unreachable or remaining < MIN_FALLBACK_SECONDS:
        return result(ok=False, error=str(failure))
    config = CallConfig(
        provider, endpoint, model_id, api_key, {"max_tokens": 1}, remaining, max_retries=0
    )
    usage = Usage()
    try:
        with _recorded(
            kind="complete",
            purpose="test",
            usage=usage,
            provider=provider,
            model_id=model_id,
            owner=owner,
        ):
            answer = provider_for(provider).complete(config, [Message("user", "Say OK.")])
            usage.prompt_tokens = answer.usage.prompt_tokens
            usage.completion_tokens = answer.usage.completion_tokens
    except LLMEndpointRefused:
        raise
    except LLMError as error:
        return result(ok=False, error=str(error))
    return result(ok=True)
