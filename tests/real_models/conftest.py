"""Fixtures for the real-model suite: one llama.cpp server for the session, and models of
a user's that point at it (docs/providers.md, "Tested against a real server")."""

import pytest

from lmix.models import LLMModel
from tests.real_models.server import ModelServer, model_server


@pytest.fixture(autouse=True)
def checkpoints_often(settings):
    """The small model answers in a second or two: tests that act mid-stream (stop it, cut
    it) see it through its checkpoints, so these come often here."""
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 0.05


@pytest.fixture(autouse=True)
def slots_as_deployed(settings):
    """A local server's slots, as a deployment has them (the suite's default is none): the
    server answers one request at a time, so LMiX sends one at a time (lmix/llm/slots.py)."""
    settings.LMIX_LOCAL_MODEL_SLOTS = 1


@pytest.fixture(scope="session")
def llama() -> ModelServer:
    with model_server() as server:
        yield server


@pytest.fixture(scope="session")
def llama_model_id(llama) -> str:
    return llama.model_id()


def llama_model(owner, server: ModelServer, model_id: str, **config) -> LLMModel:
    """A model row of `owner`'s on the real server, as a user adds one."""
    return LLMModel.objects.create(
        owner=owner,
        name=f"SmolLM2 {server.port}",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id=model_id,
        config=config,
    )
