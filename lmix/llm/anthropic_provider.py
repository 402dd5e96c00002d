"""Anthropic's Messages API via the `anthropic` SDK; structured output through a forced tool."""

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
from pydantic import BaseModel

from . import structured
from .base import CallConfig, Completion, Message, StructuredMode, Usage
from .endpoints import api_base
from .failures import SDKErrors, translated
from .pinning import pinned_http_client
from .tokens import estimate_usage

ERRORS = SDKErrors(anthropic.AnthropicError, anthropic.APITimeoutError, anthropic.APIStatusError)
# An explicit (if wrong) key stops the SDK from reading the server's own ANTHROPIC_* env.
NO_KEY = "no-key"
# Anthropic requires max_tokens on every request.
DEFAULT_MAX_TOKENS = 1024


def _client(config: CallConfig) -> anthropic.Anthropic:
    base_url = api_base("anthropic", config.endpoint)
    return anthropic.Anthropic(
        api_key=config.api_key or NO_KEY,
        base_url=base_url,
        timeout=httpx2.Timeout(config.timeout, connect=config.connect_timeout),
        max_retries=config.max_retries,  # the SDK backs off on 429/5xx/dropped connections
        http_client=pinned_http_client(base_url, anthropic.DefaultHttpxClient, config.pins),
    )


def _request(config: CallConfig, messages: list[Message]) -> dict[str, Any]:
    """System text goes apart; turns alternate and open with the user, as the API requires."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    turns: list[dict[str, str]] = []
    for message in messages:
        if message.role == "system":
            continue
        content = message.content or "..."  # empty text blocks are refused
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] += f"\n\n{content}"
        else:
            turns.append({"role": message.role, "content": content})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": "Continue."})
    params = config.params
    request: dict[str, Any] = {
        "model": config.model_id,
        "messages": turns,
        "max_tokens": params.get("max_tokens", DEFAULT_MAX_TOKENS),
    }
    if system:
        request["system"] = system
    if "stop" in params:
        request["stop_sequences"] = params["stop"]
    # Sent: max_tokens and stop sequences. The Messages API (as of SDK 2.x) has no
    # temperature, top_p, frequency or presence penalty: they are dropped here rather than
    # refused, so one config (or a sampler preset) serves every provider (docs/providers.md).
    return request


def _usage(reported: Any) -> Usage:
    return Usage(reported.input_tokens or 0, reported.output_tokens or 0)


def _fill_if_unreported(usage: Usage, messages: list[Message], text: str) -> None:
    """Proxies in front of Anthropic may report no usage; count it ourselves then."""
    if not usage.prompt_tokens and not usage.completion_tokens:
        estimate = estimate_usage(messages, text)
        usage.prompt_tokens = estimate.prompt_tokens
        usage.completion_tokens = estimate.completion_tokens


class AnthropicProvider:
    structured_modes: tuple[StructuredMode, ...] = ("tool",)

    def _create(self, config: CallConfig, messages: list[Message], **extra: Any) -> Any:
        with (
            translated(ERRORS, config.provider, "complete", endpoint=config.endpoint),
            _client(config) as client,
        ):
            return client.messages.create(**_request(config, messages), **extra)

    def complete(self, config: CallConfig, messages: list[Message]) -> Completion:
        response = self._create(config, messages)
        text = "".join(block.text for block in response.content if block.type == "text")
        usage = _usage(response.usage)
        _fill_if_unreported(usage, messages, text)
        return Completion(text, usage)

    def stream(self, config: CallConfig, messages: list[Message], usage: Usage) -> Iterator[str]:
        parts: list[str] = []
        with (
            translated(ERRORS, config.provider, "stream", endpoint=config.endpoint),
            _client(config) as client,
        ):
            events = client.messages.create(**_request(config, messages), stream=True)
            with events:  # closing it ends the HTTP response when the caller stops early
                for event in events:
                    if event.type == "message_start":
                        usage.prompt_tokens = event.message.usage.input_tokens or 0
                    elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                        if event.delta.text:
                            parts.append(event.delta.text)
                            yield event.delta.text
                    elif event.type == "message_delta" and event.usage is not None:
                        usage.completion_tokens = event.usage.output_tokens or 0
        _fill_if_unreported(usage, messages, "".join(parts))

    def structured(
        self,
        config: CallConfig,
        messages: list[Message],
        schema: type[BaseModel],
        usage: Usage,
        mode: StructuredMode,
        wire: dict | None = None,
    ) -> str:
        tool = structured.tool_definition(schema, wire)
        response = self._create(
            config,
            messages,
            tools=[tool],
            tool_choice={"type": "tool", "name": tool["name"]},
        )
        answer = _usage(response.usage)
        usage.prompt_tokens += answer.prompt_tokens
        usage.completion_tokens += answer.completion_tokens
        for block in response.content:
            if block.type == "tool_use":
                return json.dumps(block.input)
        # A proxy may ignore tools and answer in text: the caller parses that instead.
        return "".join(block.text for block in response.content if block.type == "text")

    def list_models(self, config: CallConfig) -> list[str]:
        with (
            translated(ERRORS, config.provider, "list_models", endpoint=config.endpoint),
            _client(config) as client,
        ):
            return list(dict.fromkeys(model.id for model in client.models.list(limit=1000)))
