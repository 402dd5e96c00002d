"""What only the OpenAI adapter does: JSON-schema mode, its fallback, Ollama's /v1, usage."""

import pytest
from pydantic import BaseModel

from lmix.llm import structured
from lmix.llm.base import LLMError, Message, Usage
from lmix.llm.openai_provider import NO_KEY, OpenAIProvider
from lmix.llm.tokens import count_message_tokens, count_tokens

MESSAGES = [Message("system", "Be brief."), Message("user", "Hello?")]


class Verdict(BaseModel):
    guilty: bool


def test_json_schema_mode_sends_the_schema_and_names_it(fake_llm, config_for):
    fake_llm.queue(data={"guilty": True})
    sent = structured.conversation("json_schema", MESSAGES, Verdict)
    raw = OpenAIProvider().structured(config_for("openai"), sent, Verdict, Usage(), "json_schema")
    assert raw == '{"guilty": true}'
    body = fake_llm.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Verdict"
    assert body["response_format"]["json_schema"]["schema"] == Verdict.model_json_schema()
    # The schema is in the prompt too, for servers that ignore response_format.
    assert body["messages"][0]["role"] == "system"
    assert '"guilty"' in body["messages"][0]["content"]
    assert len([m for m in body["messages"] if m["role"] == "system"]) == 1


def test_json_object_mode_carries_no_schema(fake_llm, config_for):
    # llama.cpp's grammar compiler crashes on a schema inside json_object (maxLength).
    sent = structured.conversation("json_object", MESSAGES, Verdict)
    OpenAIProvider().structured(config_for("openai"), sent, Verdict, Usage(), "json_object")
    body = fake_llm.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert '"guilty"' in body["messages"][0]["content"]  # the schema is in the prompt


def test_prompt_mode_sends_no_response_format(fake_llm, config_for):
    sent = structured.conversation("prompt", MESSAGES, Verdict)
    OpenAIProvider().structured(config_for("openai"), sent, Verdict, Usage(), "prompt")
    body = fake_llm.requests[0].body
    assert "response_format" not in body
    assert '"guilty"' in body["messages"][0]["content"]


def test_ollama_endpoint_gets_v1(fake_llm, config_for):
    config = config_for("ollama", endpoint=fake_llm.root_url)  # as users paste it: no /v1
    assert OpenAIProvider().complete(config, MESSAGES).text
    assert fake_llm.requests[0].path == "/v1/chat/completions"


def test_openai_asks_for_stream_usage_and_uses_it(fake_llm, config_for):
    usage = Usage()
    text = "".join(OpenAIProvider().stream(config_for("openai"), MESSAGES, usage))
    assert fake_llm.requests[0].body["stream_options"] == {"include_usage": True}
    assert usage.completion_tokens == len(text.split())  # the fake's count, not tiktoken's


def test_compatible_server_without_usage_is_counted_locally(fake_llm, config_for):
    text = "Counted by tiktoken, not by the server."
    fake_llm.queue(text=text, usage=False)
    answer = OpenAIProvider().complete(config_for("openai_compatible"), MESSAGES)
    assert answer.usage.completion_tokens == count_tokens(text)
    assert answer.usage.prompt_tokens == count_message_tokens(MESSAGES)
    usage = Usage()
    streamed = "".join(OpenAIProvider().stream(config_for("openai_compatible"), MESSAGES, usage))
    assert "stream_options" not in fake_llm.requests[1].body
    assert usage.completion_tokens == count_tokens(streamed) > 0


def test_parameters_reach_the_server(fake_llm, config_for):
    params = {"temperature": 0.2, "max_tokens": 50, "stop": ["END"], "presence_penalty": 0.5}
    OpenAIProvider().complete(config_for("openai_compatible", params=params), MESSAGES)
    body = fake_llm.requests[0].body
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50
    assert body["stop"] == ["END"] and body["presence_penalty"] == 0.5
    OpenAIProvider().complete(config_for("openai", params=params), MESSAGES)
    assert fake_llm.requests[1].body["max_completion_tokens"] == 50  # OpenAI's current name
    assert "max_tokens" not in fake_llm.requests[1].body


def test_empty_key_never_falls_back_to_the_servers_environment(fake_llm, config_for, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SERVER-OWN-KEY")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-server")
    OpenAIProvider().complete(config_for("openai_compatible", api_key=""), MESSAGES)
    headers = fake_llm.requests[0].headers
    assert headers["authorization"] == f"Bearer {NO_KEY}"
    assert "openai-organization" not in headers


def test_an_error_in_the_middle_of_a_stream_fails_it_after_the_text_before(fake_llm, config_for):
    # The chunks are read as plain JSON (no typed chunk per delta): an error event the
    # server sends mid-answer still fails the call, after the text that came first.
    fake_llm.queue(
        body='data: {"choices": [{"index": 0, "delta": {"content": "Half "}}]}\n\n'
        'data: {"error": {"message": "the model crashed"}}\n\n',
        headers={"Content-Type": "text/event-stream"},
    )
    got = []
    with pytest.raises(LLMError) as failure:
        for delta in OpenAIProvider().stream(config_for("openai_compatible"), MESSAGES, Usage()):
            got.append(delta)
    assert got == ["Half "]
    assert "before finishing" not in str(failure.value)  # the error, not a cut stream
