"""The adapters, keyed by provider kind (LLMModel.provider)."""

from .anthropic_provider import AnthropicProvider
from .base import LLMBadRequest, Provider
from .offline import OfflineNarrator
from .openai_provider import OpenAIProvider

# Ollama's OpenAI-compatible API is the same adapter; `endpoints.api_base` adds its /v1.
PROVIDERS: dict[str, Provider] = {
    "openai": OpenAIProvider(),
    "openai_compatible": OpenAIProvider(),
    "ollama": OpenAIProvider(),
    "anthropic": AnthropicProvider(),
    "offline": OfflineNarrator(),
}


def provider_for(kind: str) -> Provider:
    try:
        return PROVIDERS[kind]
    except KeyError:
        raise LLMBadRequest(f"Unknown provider kind {kind!r}.") from None
