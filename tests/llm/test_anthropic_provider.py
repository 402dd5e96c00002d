"""What only the Anthropic adapter does: message shaping, parameters, structured via a tool."""

from pydantic import BaseModel

from lmix.llm.anthropic_provider import DEFAULT_MAX_TOKENS, NO_KEY, AnthropicProvider
from lmix.llm.base import Message, Usage
from lmix.llm.tokens import count_message_tokens, count_tokens


class Verdict(BaseModel):
    guilty: bool


def test_system_goes_apart_and_turns_alternate_from_the_user(fake_llm, config_for):
    messages = [
        Message("system", "Rules."),
        Message("assistant", "The hall is quiet."),
        Message("user", "I wait."),
        Message("user", "I wait some more."),
        Message("system", "YOU ARE: Mira"),
    ]
    AnthropicProvider().complete(config_for("anthropic"), messages)
    body = fake_llm.requests[0].body
    assert body["system"] == "Rules.\n\nYOU ARE: Mira"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"] == "I wait.\n\nI wait some more."
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS  # required by Anthropic


def test_parameters_are_mapped(fake_llm, config_for):
    params = {"temperature": 1.5, "top_p": 0.9, "stop": ["END"], "frequency_penalty": 1.0}
    config = config_for("anthropic", params={**params, "max_tokens": 99})
    AnthropicProvider().complete(config, [Message("user", "Hi")])
    body = fake_llm.requests[0].body
    assert body["stop_sequences"] == ["END"]
    assert body["max_tokens"] == 99
    # Not in the Messages API any more: dropped, not sent to be refused.
    assert not {"temperature", "top_p", "frequency_penalty"} & set(body)


def test_structured_forces_a_tool_with_the_schema(fake_llm, config_for):
    fake_llm.queue(data={"guilty": True})
    raw = AnthropicProvider().structured(
        config_for("anthropic"), [Message("user", "Judge.")], Verdict, Usage(), "tool"
    )
    assert raw == '{"guilty": true}'  # the tool call's input, as JSON
    body = fake_llm.requests[0].body
    (tool,) = body["tools"]
    assert tool["input_schema"] == Verdict.model_json_schema()
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}


def test_endpoint_with_or_without_v1_works(fake_llm, config_for):
    for endpoint in (fake_llm.root_url, fake_llm.base_url, fake_llm.base_url + "/messages"):
        AnthropicProvider().complete(
            config_for("anthropic", endpoint=endpoint), [Message("user", "Hi")]
        )
    assert {r.path for r in fake_llm.requests} == {"/v1/messages"}


def test_empty_key_never_falls_back_to_the_servers_environment(fake_llm, config_for, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SERVER-OWN-KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "server-token")
    AnthropicProvider().complete(config_for("anthropic", api_key=""), [Message("user", "Hi")])
    headers = fake_llm.requests[0].headers
    assert headers["authorization"] == f"Bearer {NO_KEY}"
    assert "x-api-key" not in headers


def test_usage_is_counted_locally_when_not_reported(fake_llm, config_for):
    messages = [Message("user", "Hi")]
    fake_llm.queue(text="Counted here.", usage=False)
    fake_llm.queue(text="Counted here.", usage=False)
    answer = AnthropicProvider().complete(config_for("anthropic"), messages)
    assert answer.usage == Usage(count_message_tokens(messages), count_tokens("Counted here."))
    usage = Usage()
    assert "".join(AnthropicProvider().stream(config_for("anthropic"), messages, usage))
    assert usage == answer.usage
