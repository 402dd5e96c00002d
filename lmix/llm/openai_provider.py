"""OpenAI and OpenAI-compatible servers (Ollama's /v1, vLLM, LM Studio) via the `openai` SDK."""

from collections.abc import Iterator
from typing import Any

import httpx2
import openai
from pydantic import BaseModel

from . import structured
from .base import (
    CallConfig,
    Completion,
    LLMInvalidOutput,
    LLMUnavailable,
    Message,
    StructuredMode,
    Usage,
)
from .endpoints import api_base
from .failures import SDKErrors, failed, shown_endpoint, translated
from .pinning import pinned_http_client
from .tokens import estimate_usage

ERRORS = SDKErrors(openai.OpenAIError, openai.APITimeoutError, openai.APIStatusError)
# Local servers take no key but the SDK insists on one; an empty key must never let the SDK
# fall back to the server's own OPENAI_API_KEY.
NO_KEY = "no-key"


def _client(config: CallConfig) -> openai.OpenAI:
    base_url = api_base(config.provider, config.endpoint)
    client = openai.OpenAI(
        api_key=config.api_key or NO_KEY,
        base_url=base_url,
        timeout=httpx2.Timeout(config.timeout, connect=config.connect_timeout),
        max_retries=config.max_retries,  # the SDK backs off on 429/5xx/dropped connections
        http_client=pinned_http_client(base_url, openai.DefaultHttpxClient, config.pins),
    )
    # Nor may the server's OPENAI_ORG_ID / PROJECT_ID / ADMIN_KEY reach a user's endpoint.
    client.organization = client.project = client.admin_api_key = None
    return client


def _params(config: CallConfig) -> dict[str, Any]:
    params = dict(config.params)
    if config.provider == "openai" and "max_tokens" in params:
        # OpenAI's reasoning models refuse max_tokens; every current model takes this.
        params["max_completion_tokens"] = params.pop("max_tokens")
    return params


def _wire(messages: list[Message]) -> list[dict[str, str]]:
    return [m.as_dict() for m in messages]


class OpenAIProvider:
    """One adapter for every server that speaks OpenAI's chat completions API."""

    # llama.cpp's server answers json_schema with a 500 and takes json_object; some servers
    # take neither (the client finds out once per model and remembers).
    # grammar: llama.cpp's servers take a schema inside json_object and compile it to a
    # grammar; where json_schema is refused, that still makes the answer fit the shape.
    structured_modes: tuple[StructuredMode, ...] = (
        "json_schema",
        "grammar",
        "json_object",
        "prompt",
    )

    def _create(self, config: CallConfig, messages: list[Message], **extra: Any) -> Completion:
        with (
            translated(ERRORS, config.provider, "complete", endpoint=config.endpoint),
            _client(config) as client,
        ):
            response = client.chat.completions.create(
                model=config.model_id, messages=_wire(messages), **_params(config), **extra
            )
        if not response.choices:
            raise failed(config.provider, "complete", LLMInvalidOutput())
        text = response.choices[0].message.content or ""
        reported = response.usage
        if reported is None:
            return Completion(text, estimate_usage(messages, text))
        return Completion(text, Usage(reported.prompt_tokens, reported.completion_tokens))

    def complete(self, config: CallConfig, messages: list[Message]) -> Completion:
        return self._create(config, messages)

    def stream(self, config: CallConfig, messages: list[Message], usage: Usage) -> Iterator[str]:
        # Only OpenAI itself is sure to accept stream_options; others get counted locally.
        extra = {"stream_options": {"include_usage": True}} if config.provider == "openai" else {}
        parts: list[str] = []
        reported = finished = False
        with (
            translated(ERRORS, config.provider, "stream", endpoint=config.endpoint),
            _client(config) as client,
        ):
            # The chunks as plain JSON: the SDK's typed chunk costs more CPU than all the
            # rest of a delta's way to its reader, and a streams worker reads thousands a
            # second (tests/bench/streams.py). Errors and SSE parsing stay the SDK's.
            chunks = client.post(
                "/chat/completions",
                body={
                    "model": config.model_id,
                    "messages": _wire(messages),
                    "stream": True,
                    **_params(config),
                    **extra,
                },
                cast_to=object,
                stream=True,
                stream_cls=openai.Stream[object],
            )
            with chunks:  # closing it ends the HTTP response when the caller stops early
                for chunk in chunks:
                    if not isinstance(chunk, dict):
                        continue
                    counted = chunk.get("usage")
                    if isinstance(counted, dict):
                        usage.prompt_tokens = int(counted.get("prompt_tokens") or 0)
                        usage.completion_tokens = int(counted.get("completion_tokens") or 0)
                        reported = True
                    for choice in chunk.get("choices") or []:
                        if not isinstance(choice, dict):
                            continue
                        finished = finished or choice.get("finish_reason") is not None
                        delta = (choice.get("delta") or {}).get("content")
                        if isinstance(delta, str) and delta:
                            parts.append(delta)
                            yield delta
        if parts and not finished:
            # The answer was cut, not ended: llama-cpp-python's server closes a stream so
            # when another request arrives (unless run with --interrupt_requests False).
            # Stored as done, it would be a story that stops mid-sentence. (Cut before any
            # text, it is an empty answer: tried again.)
            why = (
                f"The provider at {shown_endpoint(config.endpoint)} ended the answer before "
                "finishing it (no finish reason)."
            )
            raise failed(config.provider, "stream", LLMUnavailable(why))
        if not reported:
            estimate = estimate_usage(messages, "".join(parts))
            usage.prompt_tokens = estimate.prompt_tokens
            usage.completion_tokens = estimate.completion_tokens

    def structured(
        self,
        config: CallConfig,
        messages: list[Message],
        schema: type[BaseModel],
        usage: Usage,
        mode: StructuredMode,
        wire: dict | None = None,
    ) -> str:
        extra: dict[str, Any] = {}
        if mode == "json_schema":
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": structured.schema_name(schema),
                    "schema": structured.json_schema(schema, wire),
                    # Strict mode wants every field required and no extras: most models aren't.
                    "strict": False,
                },
            }
        elif mode == "grammar":
            schema_only = structured.grammar_schema(structured.json_schema(schema, wire))
            extra["response_format"] = {"type": "json_object", "schema": schema_only}
        elif mode == "json_object":
            extra["response_format"] = {"type": "json_object"}
        answer = self._create(config, messages, **extra)
        usage.prompt_tokens += answer.usage.prompt_tokens
        usage.completion_tokens += answer.usage.completion_tokens
        return answer.text

    def list_models(self, config: CallConfig) -> list[str]:
        with (
            translated(ERRORS, config.provider, "list_models", endpoint=config.endpoint),
            _client(config) as client,
        ):
            return list(dict.fromkeys(model.id for model in client.models.list()))
