"""Endpoint normalisation, provider inference and display names."""

import pytest

from lmix.llm.endpoints import api_base, infer_provider, model_display_name, normalize_endpoint


@pytest.mark.parametrize(
    ("pasted", "normal"),
    [
        ("  https://api.openai.com/v1/  ", "https://api.openai.com/v1"),
        ("https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1"),
        ("http://localhost:11434/v1/chat/completions/", "http://localhost:11434/v1"),
        ("https://api.anthropic.com/v1/messages", "https://api.anthropic.com/v1"),
        ("http://10.0.0.5:8000/v1/models", "http://10.0.0.5:8000/v1"),
        ("localhost:1234/v1", "http://localhost:1234/v1"),
        ("llm.example.com/v1", "https://llm.example.com/v1"),
        ("offline://narrator", "offline://narrator"),
        ("", ""),
    ],
)
def test_normalize_endpoint(pasted, normal):
    assert normalize_endpoint(pasted) == normal


@pytest.mark.parametrize(
    ("endpoint", "provider"),
    [
        ("offline://narrator", "offline"),
        ("https://api.openai.com/v1", "openai"),
        ("https://api.anthropic.com", "anthropic"),
        ("http://localhost:11434", "ollama"),
        ("http://ollama.lan:8080/v1", "ollama"),
        ("http://localhost:1234/v1", "openai_compatible"),
        ("https://vllm.example.com/v1", "openai_compatible"),
    ],
)
def test_infer_provider(endpoint, provider):
    assert infer_provider(endpoint) == provider


@pytest.mark.parametrize(
    ("provider", "endpoint", "base"),
    [
        ("ollama", "http://localhost:11434", "http://localhost:11434/v1"),
        ("ollama", "http://localhost:11434/v1", "http://localhost:11434/v1"),
        ("anthropic", "https://api.anthropic.com/v1", "https://api.anthropic.com"),
        ("openai_compatible", "http://x:1/v1/", "http://x:1/v1"),
    ],
)
def test_api_base(provider, endpoint, base):
    assert api_base(provider, endpoint) == base


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        ("gpt-4-turbo-preview", "GPT-4 Turbo Preview"),
        ("gpt-4o-mini", "GPT-4o Mini"),
        ("gpt-3.5-turbo", "GPT-3.5 Turbo"),
        ("claude-3-5-sonnet-latest", "Claude 3.5 Sonnet (latest)"),
        ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 (2025-09-29)"),
        ("llama3.1:8b", "Llama 3.1 8B"),
        ("qwen2.5-coder:7b", "Qwen 2.5 Coder 7B"),
        ("mixtral-8x7b", "Mixtral 8x7B"),
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama 3.1 8B Instruct"),
        ("narrator", "Offline Narrator"),
    ],
)
def test_model_display_name(model_id, name):
    assert model_display_name(model_id) == name
