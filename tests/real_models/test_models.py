"""Adding the real llama.cpp server as a user does: test connection, discovery of its model
and its context size, structured-output negotiation remembered on the model row, and the
404 of a missing /v1."""

from contextlib import suppress

import pytest

from lmix.llm.base import LLMInvalidOutput, Message
from lmix.llm.client import llm_structured
from lmix.models import LLMModel
from synthesis.soft import SoftAnalysis
from tests.real_models.conftest import llama_model
from tests.real_models.server import CONTEXT

pytestmark = [pytest.mark.real_model, pytest.mark.django_db]


def test_testing_the_server_lists_its_model_and_reports_its_context_size(api, llama):
    answer = api.post(
        "/api/models/test",
        {"provider": "openai_compatible", "api_endpoint": llama.base_url},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    result = answer.json()
    assert result["ok"] is True
    assert result["models"] == [llama.model_id()]
    assert result["context_size"] == CONTEXT


def test_a_model_added_from_the_server_stores_the_discovered_context_size(api, llama):
    answer = api.post(
        "/api/models",
        {
            "name": "Smol",
            "provider": "openai_compatible",
            "api_endpoint": llama.base_url,
            "model_id": llama.model_id(),
        },
        format="json",
    )
    assert answer.status_code == 201, answer.content
    model = LLMModel.objects.get(pk=answer.json()["id"])
    assert model.config["context_size"] == CONTEXT


def test_an_endpoint_without_v1_says_404_and_suggests_it(api, llama):
    answer = api.post(
        "/api/models/test",
        {"provider": "openai_compatible", "api_endpoint": llama.root, "model_id": "x"},
        format="json",
    )
    result = answer.json()
    assert result["ok"] is False
    assert "404" in result["error"] and "/v1" in result["error"]
    assert "400" not in result["error"]


def test_structured_calls_settle_on_a_mode_the_server_takes_and_keep_to_it(
    user, llama, llama_model_id
):
    smol = llama_model(user, llama, llama_model_id, temperature=0.0)
    messages = [
        Message("system", "You size a player's intended action in a scene."),
        Message("user", "ACTION: I open the door."),
    ]
    first: list[dict] = []
    # A 135M model may not fill the schema: what matters here is how it was asked.
    with suppress(LLMInvalidOutput):
        llm_structured(
            model=smol, messages=messages, schema=SoftAnalysis, purpose="test", tries=first
        )
    assert first[0]["mode"] == "json_schema" and "500" in first[0]["error"]
    assert first[1]["mode"] == "grammar"
    smol.refresh_from_db()
    assert smol.config["structured_mode"] == "grammar"
    again: list[dict] = []
    with suppress(LLMInvalidOutput):
        llm_structured(
            model=smol, messages=messages, schema=SoftAnalysis, purpose="test", tries=again
        )
    assert again and {t["mode"] for t in again} == {"grammar"}
    assert all(t["raw"] or t["error"] for t in again)
