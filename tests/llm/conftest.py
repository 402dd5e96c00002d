"""Fixtures for the LLM layer: the fake server, call configs pointing at it, a GM and models."""

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from lmix.llm.base import CallConfig
from lmix.models import LLMModel
from tests.fakes.fixtures import fake_llm  # noqa: F401  (a fixture)
from tests.fakes.llm_server import FakeLLMServer

# Planted in configs and models; no message, log line, repr or LLMCall row may contain it.
KEY = "sk-SECRET-MARKER-123"


@pytest.fixture
def config_for(fake_llm: FakeLLMServer) -> Callable[..., CallConfig]:  # noqa: F811
    """A CallConfig for `provider` at the fake server: tiny timeout, quick retries."""

    def make(provider: str, **fields) -> CallConfig:
        values = {
            "provider": provider,
            "endpoint": fake_llm.base_url,
            "model_id": "fake-model",
            "api_key": KEY,
            "timeout": 5.0,
            "max_retries": 2,
            **fields,
        }
        return CallConfig(**values)

    return make


@pytest.fixture
def gm(db) -> User:
    return User.objects.create_user("gm", password="irrelevant-password-1")


@pytest.fixture
def model_for(gm: User, fake_llm: FakeLLMServer) -> Callable[..., LLMModel]:  # noqa: F811
    """An LLMModel owned by `gm`, pointing at the fake server unless told otherwise."""

    def make(provider: str = "openai_compatible", **fields) -> LLMModel:
        values = {
            "owner": gm,
            "name": f"Fake {provider}",
            "provider": provider,
            "api_endpoint": fake_llm.base_url,
            "model_id": f"fake-{provider}",
            "api_key": KEY,
            **fields,
        }
        return LLMModel.objects.create(**values)

    return make
