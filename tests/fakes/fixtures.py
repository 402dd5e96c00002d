"""Pytest fixtures for the fakes; a conftest imports them: `from tests.fakes.fixtures import *`."""

from collections.abc import Iterator

import pytest

from .llm_server import FakeLLMServer

__all__ = ["fake_llm"]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A fresh FakeLLMServer on 127.0.0.1 for one test; `.base_url` ends in /v1."""
    with FakeLLMServer() as server:
        yield server
