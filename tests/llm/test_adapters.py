"""Both SDK adapters against the fake server: success, streaming, retries, errors, structured."""

import json
import logging
import traceback

import pytest
from pydantic import BaseModel, Field

from lmix.llm.base import (
    LLMAuthError,
    LLMBadRequest,
    LLMInvalidOutput,
    LLMTimeout,
    LLMUnavailable,
    Message,
    Usage,
)
from lmix.llm.client import llm_structured
from lmix.llm.registry import provider_for
from lmix.models import LLMCall
from tests.fakes.llm_server import DEFAULT_MODELS

from .conftest import KEY

KINDS = ["openai", "anthropic"]
COMPLETION_PATH = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
MESSAGES = [
    Message("system", "YOU ARE: Mira\nStay in character."),
    Message("user", "Who goes there?"),
]


class Character(BaseModel):
    name: str
    age: int = Field(ge=0, le=150)


GOOD = {"name": "Mira", "age": 31}


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    return request.param


def completions(server, kind):
    return server.requests_to(COMPLETION_PATH[kind])


def test_complete_returns_text_and_reported_usage(fake_llm, config_for, kind):
    fake_llm.queue(text="A lantern swings in the dark.")
    answer = provider_for(kind).complete(config_for(kind), MESSAGES)
    assert answer.text == "A lantern swings in the dark."
    assert answer.usage.completion_tokens == 6  # the fake reports one token per word
    assert answer.usage.prompt_tokens > 0
    (request,) = completions(fake_llm, kind)
    assert request.body["model"] == "fake-model"
    assert request.api_key == KEY


def test_stream_yields_deltas_in_order(fake_llm, config_for, kind):
    text = "One two three four five six."
    fake_llm.queue(text=text)
    usage = Usage()
    deltas = list(provider_for(kind).stream(config_for(kind), MESSAGES, usage))
    assert len(deltas) >= 5
    assert "".join(deltas) == text
    assert usage.completion_tokens == 6 and usage.prompt_tokens > 0
    assert completions(fake_llm, kind)[0].body["stream"] is True


def test_rate_limit_is_retried_then_succeeds(fake_llm, config_for, kind):
    fake_llm.queue(status=429, headers={"retry-after-ms": "10"})
    fake_llm.queue(text="Finally.")
    answer = provider_for(kind).complete(config_for(kind), MESSAGES)
    assert answer.text == "Finally."
    assert len(completions(fake_llm, kind)) == 2


def test_server_error_is_retried_until_retries_run_out(fake_llm, config_for, kind):
    for _ in range(3):
        fake_llm.queue(status=503, headers={"retry-after-ms": "10"})
    with pytest.raises(LLMUnavailable) as caught:
        provider_for(kind).complete(config_for(kind, max_retries=2), MESSAGES)
    assert len(completions(fake_llm, kind)) == 3
    assert "503" in str(caught.value)


def test_dropped_connection_is_retried(fake_llm, config_for, kind):
    fake_llm.queue(drop=True)
    fake_llm.queue(text="Back again.")
    assert provider_for(kind).complete(config_for(kind), MESSAGES).text == "Back again."
    assert len(completions(fake_llm, kind)) == 2


def test_unauthorized_is_not_retried_and_never_shows_the_key(fake_llm, config_for, kind, caplog):
    caplog.set_level(logging.DEBUG)
    fake_llm.queue(status=401)  # the fake's body echoes the key it was sent
    config = config_for(kind)
    with pytest.raises(LLMAuthError) as caught:
        provider_for(kind).complete(config, MESSAGES)
    assert len(completions(fake_llm, kind)) == 1
    error = caught.value
    shown = [str(error), repr(error), "".join(traceback.format_exception(error)), repr(config)]
    shown.append(caplog.text)
    assert all(KEY not in text for text in shown)
    assert "API key" in str(error)


def test_bad_request_is_not_retried(fake_llm, config_for, kind):
    fake_llm.queue(status=404)
    with pytest.raises(LLMBadRequest) as caught:
        provider_for(kind).complete(config_for(kind), MESSAGES)
    assert "404 (not found)" in str(caught.value) and "(400)" not in str(caught.value)
    assert len(completions(fake_llm, kind)) == 1


def test_slow_server_times_out(fake_llm, config_for, kind):
    fake_llm.queue(delay=3)
    with pytest.raises(LLMTimeout) as caught:
        provider_for(kind).complete(config_for(kind, timeout=0.3, max_retries=0), MESSAGES)
    assert f"The provider at {fake_llm.base_url}" in str(caught.value)
    assert "(timeout)" in str(caught.value)


def test_unreachable_server_is_unavailable_naming_the_endpoint_and_the_cause(config_for, kind):
    # A key pasted into the URL must not be shown with the endpoint either.
    config = config_for(kind, endpoint=f"http://user:{KEY}@127.0.0.1:9/v1?key={KEY}", max_retries=0)
    with pytest.raises(LLMUnavailable) as caught:
        provider_for(kind).complete(config, MESSAGES)
    message = str(caught.value)
    assert (
        message == "The provider at http://127.0.0.1:9/v1 could not be reached: connection refused."
    )
    shown = [message, repr(caught.value), "".join(traceback.format_exception(caught.value))]
    assert all(KEY not in text for text in shown)


def test_a_tls_failure_is_named(fake_llm, config_for, kind):
    # The fake speaks plain HTTP: a TLS handshake with it fails.
    endpoint = fake_llm.base_url.replace("http://", "https://")
    with pytest.raises(LLMUnavailable) as caught:
        provider_for(kind).complete(config_for(kind, endpoint=endpoint, max_retries=0), MESSAGES)
    assert str(caught.value) == (
        f"The provider at {endpoint} could not be reached: the TLS handshake failed."
    )


def test_a_server_error_names_the_endpoint_and_the_status(fake_llm, config_for, kind):
    fake_llm.queue(status=502)
    with pytest.raises(LLMUnavailable) as caught:
        provider_for(kind).complete(config_for(kind, max_retries=0), MESSAGES)
    assert str(caught.value) == f"The provider at {fake_llm.base_url} failed (HTTP 502)."


def test_list_models(fake_llm, config_for, kind):
    assert provider_for(kind).list_models(config_for(kind)) == list(DEFAULT_MODELS)
    assert fake_llm.requests[0].method == "GET"
    assert fake_llm.requests[0].path == "/v1/models"


# -- structured (the adapters' one request, validated and repaired by llm_structured) --------

MODEL_KIND = {"openai": "openai_compatible", "anthropic": "anthropic"}


def structured_model(model_for, kind):
    return model_for(MODEL_KIND[kind])


@pytest.mark.django_db
def test_structured_valid_first_time(fake_llm, model_for, kind):
    fake_llm.queue(data=GOOD)
    tries: list[dict] = []
    model = structured_model(model_for, kind)
    result = llm_structured(
        model=model, messages=MESSAGES, schema=Character, purpose="t", tries=tries
    )
    assert result == Character(**GOOD)
    assert len(completions(fake_llm, kind)) == 1
    assert LLMCall.objects.get().completion_tokens > 0
    (only,) = tries
    assert only["error"] == "" and json.loads(only["raw"]) == GOOD


@pytest.mark.django_db
def test_structured_malformed_json_gets_one_repair(fake_llm, model_for, kind):
    fake_llm.queue(text='{"name": "Mira", "age": ')  # cut off mid-object
    fake_llm.queue(data=GOOD)
    model = structured_model(model_for, kind)
    result = llm_structured(model=model, messages=MESSAGES, schema=Character, purpose="t")
    assert result == Character(**GOOD)
    first, repair = completions(fake_llm, kind)
    sent = repair.body["messages"]
    assert len(sent) > len(first.body["messages"])
    assert '{"name": "Mira", "age": ' in sent[-2]["content"]  # the bad answer, sent back
    assert "corrected JSON" in sent[-1]["content"]
    call = LLMCall.objects.get()
    assert call.completion_tokens > 0 and call.prompt_tokens > 0


@pytest.mark.django_db
def test_structured_wrong_shape_gets_one_repair(fake_llm, model_for, kind):
    fake_llm.queue(data={"name": "Mira", "age": "very old"})  # no number to clamp: refused
    fake_llm.queue(data=GOOD)
    model = structured_model(model_for, kind)
    result = llm_structured(model=model, messages=MESSAGES, schema=Character, purpose="t")
    assert result.age == 31
    repair = completions(fake_llm, kind)[1]
    assert "age" in repair.body["messages"][-1]["content"]  # the validation error is shown


@pytest.mark.django_db
def test_structured_gives_up_after_the_repair(fake_llm, model_for, kind):
    fake_llm.queue(text="not json at all")
    fake_llm.queue(text="still not json")
    model = structured_model(model_for, kind)
    with pytest.raises(LLMInvalidOutput):
        llm_structured(model=model, messages=MESSAGES, schema=Character, purpose="t")
    assert len(completions(fake_llm, kind)) == 2


@pytest.mark.django_db
def test_structured_accepts_fenced_json(fake_llm, model_for, kind):
    fake_llm.queue(text='Here you go:\n```json\n{"name": "Mira", "age": 31}\n```')
    model = structured_model(model_for, kind)
    result = llm_structured(model=model, messages=MESSAGES, schema=Character, purpose="t")
    assert result == Character(**GOOD)
    assert len(completions(fake_llm, kind)) == 1


def test_the_offline_narrators_context_is_never_sent(fake_llm, config_for, kind):
    """CallConfig.context is for the offline narrator alone: no real adapter sends it."""
    from lmix.llm.offline import Reply

    secret = "CONTEXT-MARKER-7f3a"
    config = config_for(kind, context=Reply(speaker=secret, line=secret))
    assert secret not in repr(config)
    fake_llm.queue(text="A lantern swings.")
    provider_for(kind).complete(config, MESSAGES)
    fake_llm.queue(text="A lantern swings.")
    list(provider_for(kind).stream(config, MESSAGES, Usage()))
    fake_llm.queue(data=GOOD)
    mode = provider_for(kind).structured_modes[0]
    provider_for(kind).structured(config, MESSAGES, Character, Usage(), mode)
    sent = completions(fake_llm, kind)
    assert len(sent) == 3
    assert all(secret not in json.dumps(r.body) + json.dumps(r.headers) for r in sent)
