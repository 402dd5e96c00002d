"""The app's entry points: configs from models, every call recorded, connection tests."""

import logging
import time

import pytest
from pydantic import BaseModel

from lmix.llm.base import LLMAuthError, LLMBadRequest, LLMInvalidOutput, Message, Usage
from lmix.llm.client import (
    call_config_for,
    llm_complete,
    llm_list_models,
    llm_stream,
    llm_structured,
    llm_test,
)
from lmix.llm.offline import Reply
from lmix.models import OFFLINE_ENDPOINT, LLMCall
from tests.fakes.llm_server import DEFAULT_MODELS

from .conftest import KEY

pytestmark = pytest.mark.django_db
MESSAGES = [Message("system", "YOU ARE: Mira"), Message("user", '"Who goes there?" I call.')]


class Verdict(BaseModel):
    guilty: bool


@pytest.fixture(autouse=True)
def quick(settings):
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_TIMEOUT_SECONDS = 5
    settings.LLM_TEST_TIMEOUT_SECONDS = 2


def only_call() -> LLMCall:
    (call,) = LLMCall.objects.all()
    return call


def assert_no_key_in_rows():
    for row in LLMCall.objects.values():
        assert all(KEY not in str(value) for value in row.values())


# -- call_config_for -----------------------------------------------------------------------


def test_call_config_merges_overrides_and_hides_the_key(model_for, settings):
    model = model_for(config={"temperature": 0.5, "max_tokens": 100})
    config = call_config_for(model, {"max_tokens": 20, "top_p": None}, timeout=3)
    assert config.params == {"temperature": 0.5, "max_tokens": 20}
    assert config.api_key == KEY and KEY not in repr(config)
    # The SDK does not retry: the client does (lmix/llm/patience.py).
    assert config.timeout == 3 and config.max_retries == 0
    assert config.connect_timeout == settings.LLM_CONNECT_TIMEOUT_SECONDS
    assert call_config_for(model).timeout == settings.LLM_TIMEOUT_SECONDS


def test_invalid_stored_settings_are_a_bad_request_and_recorded(model_for, fake_llm):
    model = model_for(config={"temperature": 9})
    with pytest.raises(LLMBadRequest, match="temperature"):
        llm_complete(model=model, messages=MESSAGES, purpose="turn")
    assert fake_llm.requests == []
    assert "temperature" in only_call().error


# -- recording -----------------------------------------------------------------------------


def test_complete_is_recorded_with_reported_usage(model_for, fake_llm, gm):
    model = model_for(config={"temperature": 0.5})
    fake_llm.queue(text="Only the wind.")
    answer = llm_complete(model=model, messages=MESSAGES, purpose="turn", overrides={"stop": ["X"]})
    assert answer.text == "Only the wind."
    body = fake_llm.requests[0].body
    assert body["temperature"] == 0.5 and body["stop"] == ["X"]
    call = only_call()
    assert (call.owner, call.llm_model, call.kind, call.purpose) == (gm, model, "complete", "turn")
    assert (call.provider, call.model_id) == ("openai_compatible", model.model_id)
    assert call.completion_tokens == 3 and call.prompt_tokens == answer.usage.prompt_tokens > 0
    assert call.error == ""
    assert call.latency_ms >= 0


def test_failure_is_recorded_with_a_safe_message(model_for, fake_llm, caplog):
    caplog.set_level(logging.DEBUG)
    fake_llm.queue(status=401)
    with pytest.raises(LLMAuthError) as caught:
        llm_complete(model=model_for(), messages=MESSAGES, purpose="turn")
    call = only_call()
    assert call.error == str(caught.value)
    assert (call.prompt_tokens, call.completion_tokens) == (0, 0)
    assert len(fake_llm.requests) == 1
    assert KEY not in str(caught.value) and KEY not in caplog.text
    assert_no_key_in_rows()


def test_stream_is_recorded_when_it_finishes(model_for, fake_llm):
    fake_llm.queue(text="Footsteps on the stair, then silence.", usage=False)
    usage = Usage()
    deltas = list(llm_stream(model=model_for(), messages=MESSAGES, purpose="turn", usage=usage))
    assert "".join(deltas) == "Footsteps on the stair, then silence."
    call = only_call()
    assert call.kind == "stream" and call.error == "" and call.finished_at is not None
    assert call.completion_tokens == usage.completion_tokens > 0
    assert call.prompt_tokens == usage.prompt_tokens > 0


def test_stream_closed_early_is_recorded_with_partial_usage(model_for, fake_llm):
    fake_llm.queue(text="one two three four five six seven eight nine ten", chunk_delay=0.05)
    stream = llm_stream(model=model_for(), messages=MESSAGES, purpose="turn")
    assert next(stream) == "one "
    running = only_call()  # recorded before the stream, completed after it
    assert running.finished_at is None and running.completion_tokens == 0
    stream.close()
    call = only_call()
    assert call.pk == running.pk and call.finished_at is not None
    assert call.error == ""
    assert 0 < call.completion_tokens < 10
    assert call.prompt_tokens > 0


def test_stream_failure_is_recorded_and_raised(model_for, fake_llm):
    fake_llm.queue(status=401)
    with pytest.raises(LLMAuthError):
        list(llm_stream(model=model_for(), messages=MESSAGES, purpose="turn"))
    assert only_call().error == LLMAuthError.user_message
    assert_no_key_in_rows()


def test_structured_returns_the_value(model_for, fake_llm):
    fake_llm.queue(data={"guilty": True})
    result = llm_structured(model=model_for(), messages=MESSAGES, schema=Verdict, purpose="judge")
    assert result == Verdict(guilty=True)
    assert only_call().kind == "structured"


def test_structured_invalid_output_returns_the_default_but_records_the_failure(model_for, fake_llm):
    fake_llm.queue(text="no")
    fake_llm.queue(text="still no")
    default = Verdict(guilty=False)
    result = llm_structured(
        model=model_for(), messages=MESSAGES, schema=Verdict, purpose="judge", default=default
    )
    assert result is default
    call = only_call()
    assert call.error.startswith(LLMInvalidOutput.user_message.rstrip("."))
    assert "Invalid JSON" in call.error  # why, in one short line
    assert call.completion_tokens > 0  # both attempts cost tokens


def test_structured_invalid_output_without_default_raises(model_for, fake_llm):
    fake_llm.queue(text="no")
    fake_llm.queue(text="still no")
    with pytest.raises(LLMInvalidOutput):
        llm_structured(model=model_for(), messages=MESSAGES, schema=Verdict, purpose="judge")


def test_anthropic_model_through_the_client(model_for, fake_llm):
    model = model_for("anthropic", config={"max_tokens": 64})
    answer = llm_complete(model=model, messages=MESSAGES, purpose="turn")
    assert answer.text and fake_llm.requests[0].path == "/v1/messages"
    assert fake_llm.requests[0].body["max_tokens"] == 64
    assert only_call().provider == "anthropic"


def test_offline_model_through_the_client(model_for):
    # A model id of its own: the lead's signal may already have given `gm` the stock narrator.
    model = model_for("offline", api_endpoint=OFFLINE_ENDPOINT, model_id="narrator-2", api_key="")
    # The context reaches the narrator through the client; the prompt's text is not read.
    reply = Reply(speaker="Mira", kind="reply", line=MESSAGES[-1].content)
    text = "".join(llm_stream(model=model, messages=MESSAGES, purpose="turn", context=reply))
    assert "Mira" in text and "Who goes there?" in text
    assert "Mira" not in "".join(llm_stream(model=model, messages=MESSAGES, purpose="turn"))
    verdict = llm_structured(model=model, messages=MESSAGES, schema=Verdict, purpose="judge")
    assert isinstance(verdict, Verdict)
    calls = LLMCall.objects.order_by("created_at", "id")
    assert [c.kind for c in calls] == ["stream", "stream", "structured"]
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)


# -- listing and connection tests ----------------------------------------------------------


def test_list_models_is_recorded(fake_llm, gm):
    models = llm_list_models(
        provider="openai_compatible", endpoint=fake_llm.base_url, api_key=KEY, owner=gm
    )
    assert models == list(DEFAULT_MODELS)
    call = only_call()
    assert (call.kind, call.owner, call.llm_model) == ("list_models", gm, None)


def test_connection_test_lists_models(fake_llm):
    result = llm_test(provider=None, endpoint=fake_llm.base_url + "/", api_key=KEY)
    assert result["ok"] is True and result["models"] == list(DEFAULT_MODELS)
    assert isinstance(result["latency_ms"], int)
    assert "error" not in result


def test_connection_test_reports_a_refused_key_without_it(fake_llm):
    fake_llm.queue(status=401)
    result = llm_test(provider="openai_compatible", endpoint=fake_llm.base_url, api_key=KEY)
    assert result["ok"] is False and result["error"] == LLMAuthError.user_message
    assert KEY not in str(result)
    assert len(fake_llm.requests) == 1  # no retry, no completion fallback


def test_connection_test_falls_back_to_a_one_token_completion(fake_llm):
    fake_llm.queue(status=404, path="/models")
    result = llm_test(
        provider="openai_compatible", endpoint=fake_llm.base_url, api_key=KEY, model_id="m1"
    )
    assert result["ok"] is True
    listing, completion = fake_llm.requests
    assert listing.path == "/v1/models" and completion.path == "/v1/chat/completions"
    assert completion.body["model"] == "m1" and completion.body["max_tokens"] == 1


def test_connection_test_to_nothing_fails_cleanly():
    result = llm_test(provider="openai_compatible", endpoint="http://127.0.0.1:9/v1")
    assert result["ok"] is False and "could not be reached" in result["error"]


def test_connection_test_is_bounded_in_time(fake_llm, settings):
    settings.LLM_TEST_TIMEOUT_SECONDS = 0.3
    fake_llm.queue(delay=3)
    started = time.monotonic()
    result = llm_test(provider=None, endpoint=fake_llm.base_url, model_id="m1")
    assert result["ok"] is False and "in time" in result["error"]
    assert time.monotonic() - started < 2


def test_connection_test_of_the_offline_narrator():
    result = llm_test(provider=None, endpoint=OFFLINE_ENDPOINT)
    assert result["ok"] is True and result["models"] == ["narrator"]
