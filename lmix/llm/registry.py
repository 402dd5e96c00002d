"""The adapters, keyed by provider kind (LLMModel.provider).

Adapters load on first use: the SDKs take seconds to import, which every process start
(a migration, the demo seed) would otherwise pay for nothing.
"""

from functools import cache
from importlib import import_module

from .base import LLMBadRequest, Provider

# Ollama's OpenAI-compatible API is the same adapter; `endpoints.api_base` adds its /v1.
PROVIDERS: dict[str, str] = {
    "openai": "openai_provider.OpenAIProvider",
    "openai_compatible": "openai_provider.OpenAIProvider",
    "ollama": "openai_provider.OpenAIProvider",
    "anthropic": "anthropic_provider.AnthropicProvider",
    "offline": "offline.OfflineNarrator",
}


def provider_for(kind: str) -> Provider:
    try:
        path = PROVIDERS[kind]
    except KeyError:
        raise LLMBadRequest(f"Unknown provider kind {kind!r}.") from None
    return _adapter(path)


@cache
def _adapter(path: str) -> Provider:
    module, name = path.rsplit(".", 1)
    return getattr(import_module(f"{__package__}.{module}"), name)()
