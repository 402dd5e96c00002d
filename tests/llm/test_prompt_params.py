"""Prompt controls reach the wire: a model's defaults and an assistant's overrides are in the
request body each provider is sent, the prompt-only budget never is, and every call records
the parameters it was made with."""

import pytest

from lmix.llm.base import Message
from lmix.llm.client import llm_complete, llm_stream
from lmix.models import LLMCall

pytestmark = pytest.mark.django_db
MESSAGES = [Message("system", "YOU ARE: Mira"), Message("user", "Speak.")]
DEFAULTS = {"temperature": 0.4, "top_p": 0.9, "max_tokens": 300, "context_size": 2048}
OVERRIDES = {
    "temperature": 1.1,
    "frequency_penalty": 0.3,
    "presence_penalty": -0.5,
    "stop": ["\nBob:", "END"],
}


def test_openai_compatible_request_carries_defaults_and_overrides_but_no_budget(
    model_for, fake_llm
):
    model = model_for("openai_compatible", config=DEFAULTS)
    assert "".join(llm_stream(model=model, messages=MESSAGES, purpose="t", overrides=OVERRIDES))
    body = fake_llm.requests[0].body
    assert body["temperature"] == 1.1  # the override wins
    assert body["top_p"] == 0.9 and body["max_tokens"] == 300  # the model's defaults stay
    assert body["frequency_penalty"] == 0.3 and body["presence_penalty"] == -0.5
    assert body["stop"] == ["\nBob:", "END"]
    assert "context_size" not in body


def test_anthropic_request_keeps_length_and_stops_and_drops_sampling_it_has_not(
    model_for, fake_llm
):
    model = model_for("anthropic", config=DEFAULTS)
    llm_complete(model=model, messages=MESSAGES, purpose="t", overrides=OVERRIDES)
    body = fake_llm.requests[0].body
    assert body["max_tokens"] == 300 and body["stop_sequences"] == ["\nBob:", "END"]
    dropped = {"temperature", "top_p", "frequency_penalty", "presence_penalty", "context_size"}
    assert not dropped & set(body)


def test_every_call_records_the_parameters_it_was_made_with(model_for, fake_llm):
    model = model_for("openai_compatible", config=DEFAULTS)
    llm_complete(model=model, messages=MESSAGES, purpose="t", overrides={"top_p": 0.5})
    (call,) = LLMCall.objects.all()
    assert call.params == {"temperature": 0.4, "top_p": 0.5, "max_tokens": 300}
