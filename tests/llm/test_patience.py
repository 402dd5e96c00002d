"""How long calls wait and how often they are tried again; empty answers are failures."""

import time

import pytest

from lmix.llm.base import (
    LLMBadRequest,
    LLMEmptyAnswer,
    LLMTimeout,
    LLMUnavailable,
    Message,
)
from lmix.llm.client import llm_complete, llm_stream
from lmix.models import LLMCall
from tests.fakes.llm_server import Reply

pytestmark = pytest.mark.django_db
MESSAGES = [Message("system", "YOU ARE: Mira"), Message("user", '"Who goes there?" I call.')]
TEXT = "Only the wind, and the sea below."


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch):
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_TIMEOUT_SECONDS = 0.5
    settings.LLM_FIRST_TOKEN_TIMEOUT_SECONDS = 0.6
    settings.LLM_BETWEEN_TOKENS_TIMEOUT_SECONDS = 0.4
    monkeypatch.setattr("lmix.llm.patience.BACKOFF_SECONDS", 0.01)


def stream(model) -> list[str]:
    return list(llm_stream(model=model, messages=MESSAGES, purpose="turn"))


def chats(server) -> int:
    return len(server.requests_to("/chat/completions"))


# -- empty answers ---------------------------------------------------------------------------


def test_an_empty_stream_is_tried_once_more_then_fails_with_a_reason(fake_llm, model_for):
    fake_llm.responder = lambda request: Reply(text="", usage=False)  # llama.cpp, prompt too long
    with pytest.raises(LLMEmptyAnswer) as caught:
        stream(model_for())
    assert caught.value.reason == "empty_answer"
    assert "empty answer" in str(caught.value) and "context" in str(caught.value)
    assert chats(fake_llm) == 2
    assert LLMCall.objects.get().error == str(caught.value)


def test_an_empty_stream_then_text_yields_only_the_text(fake_llm, model_for):
    fake_llm.queue(text="")
    fake_llm.queue(text=TEXT)
    assert "".join(stream(model_for())) == TEXT
    assert chats(fake_llm) == 2
    assert LLMCall.objects.get().error == ""


def test_whitespace_only_is_empty_and_leading_whitespace_waits_for_text(fake_llm, model_for):
    fake_llm.queue(text="\n\n  \n")
    fake_llm.queue(text="\n\n Hello there.")
    deltas = stream(model_for())
    assert deltas[0].strip()  # nothing blank was handed out before the text came
    assert "".join(deltas) == "\n\n Hello there."
    assert chats(fake_llm) == 2


def test_a_stream_cut_before_its_finish_is_a_failure_not_a_shorter_answer(fake_llm, model_for):
    fake_llm.queue(text=TEXT, unfinished=True)  # [DONE] with no finish reason
    received: list[str] = []
    with pytest.raises(LLMUnavailable) as caught:
        received.extend(llm_stream(model=model_for(), messages=MESSAGES, purpose="turn"))
    assert "before finishing" in str(caught.value)
    assert "".join(received) == TEXT  # what came was handed on; the caller keeps it
    assert chats(fake_llm) == 1  # text was handed on: not tried again


def test_an_empty_completion_is_tried_once_more_then_fails(fake_llm, model_for):
    fake_llm.responder = lambda request: Reply(text=" \n")
    with pytest.raises(LLMEmptyAnswer):
        llm_complete(model=model_for(), messages=MESSAGES, purpose="turn")
    assert chats(fake_llm) == 2
    fake_llm.reset()
    fake_llm.queue(text="")
    assert llm_complete(model=model_for(name="B"), messages=MESSAGES, purpose="turn").text


# -- timeouts --------------------------------------------------------------------------------


def test_a_server_silent_before_the_first_token_fails_in_about_that_time(fake_llm, model_for):
    # Headers at once, then nothing: a CPU server still reading, or one that is stopped.
    fake_llm.responder = lambda request: Reply(text=TEXT, first_delay=5)
    started = time.monotonic()
    with pytest.raises(LLMTimeout) as caught:
        stream(model_for())
    elapsed = time.monotonic() - started
    assert "first-token timeout" in str(caught.value) and "0.6 s" in str(caught.value)
    assert chats(fake_llm) == 2  # tried again once, not LLM_MAX_RETRIES times
    assert 1.1 < elapsed < 2.5
    assert "first-token timeout" in LLMCall.objects.get().error


def test_a_stream_stalled_mid_answer_fails_and_is_not_tried_again(fake_llm, model_for):
    fake_llm.queue(text=TEXT, stall_after=2, stall=5)
    got: list[str] = []
    started = time.monotonic()
    with pytest.raises(LLMTimeout) as caught:
        for delta in llm_stream(model=model_for(), messages=MESSAGES, purpose="turn"):
            got.append(delta)
    elapsed = time.monotonic() - started
    assert "".join(got) == "Only the "
    assert "between-token timeout" in str(caught.value)
    assert chats(fake_llm) == 1  # text was handed out: never tried again
    assert elapsed < 1.5
    call = LLMCall.objects.get()
    assert "between-token timeout" in call.error and call.completion_tokens > 0


def test_a_slow_but_steady_stream_is_not_cut(fake_llm, model_for):
    fake_llm.queue(text=TEXT, first_delay=0.3, chunk_delay=0.1)
    assert "".join(stream(model_for())) == TEXT


def test_a_completion_that_times_out_is_tried_again_once(fake_llm, model_for):
    fake_llm.responder = lambda request: Reply(text=TEXT, delay=3)
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        llm_complete(model=model_for(), messages=MESSAGES, purpose="turn")
    assert chats(fake_llm) == 2
    assert time.monotonic() - started < 2


# -- other failures --------------------------------------------------------------------------


def test_server_errors_are_tried_again_up_to_the_setting(fake_llm, model_for, settings):
    fake_llm.queue(status=503)
    fake_llm.queue(status=502)
    fake_llm.queue(text=TEXT)
    assert "".join(stream(model_for())) == TEXT
    assert chats(fake_llm) == 3
    settings.LLM_MAX_RETRIES = 1
    fake_llm.reset()
    fake_llm.responder = lambda request: Reply(status=500)
    with pytest.raises(LLMUnavailable):
        llm_complete(model=model_for(name="B"), messages=MESSAGES, purpose="turn")
    assert chats(fake_llm) == 2


def test_a_rate_limit_waits_what_the_server_asks(fake_llm, model_for, monkeypatch):
    monkeypatch.setattr("lmix.llm.patience.BACKOFF_SECONDS", 5)  # would be too long
    fake_llm.queue(status=429, headers={"retry-after-ms": "50"})
    fake_llm.queue(text=TEXT)
    started = time.monotonic()
    assert llm_complete(model=model_for(), messages=MESSAGES, purpose="turn").text == TEXT
    assert time.monotonic() - started < 2


def test_a_bad_request_is_not_tried_again(fake_llm, model_for):
    fake_llm.queue(status=400)
    with pytest.raises(LLMBadRequest):
        stream(model_for())
    assert chats(fake_llm) == 1


def test_a_missing_v1_is_named_with_the_path_to_try(fake_llm, model_for):
    model = model_for(api_endpoint=fake_llm.root_url)  # pasted without /v1
    with pytest.raises(LLMBadRequest) as caught:
        llm_complete(model=model, messages=MESSAGES, purpose="turn")
    assert str(caught.value) == (
        f"The server answered 404 (not found) at {fake_llm.root_url}. OpenAI-compatible "
        f"servers usually serve under /v1: try {fake_llm.root_url}/v1."
    )
    assert [r.path for r in fake_llm.requests] == ["/chat/completions"]  # a 404 is not retried
