"""A bulk add (POST /api/models with a list) refuses a model its owner already has, naming it;
one at a time, the same model may still be added again under another name."""

import pytest

from lmix.models import LLMModel
from tests.factories import LLMModelFactory

pytestmark = pytest.mark.django_db
ENDPOINT = "http://localhost:1/v1"  # nothing listens: discovery finds nothing, at once
KEY = "sk-DUPLICATE-key-5521"


def _existing(user, **fields) -> LLMModel:
    model = LLMModelFactory(
        owner=user,
        name=fields.pop("name", "My Llama"),
        provider=fields.pop("provider", "openai_compatible"),
        api_endpoint=fields.pop("api_endpoint", ENDPOINT),
        model_id=fields.pop("model_id", "llama3"),
    )
    model.api_key = fields.pop("api_key", "")
    model.save()
    return model


def test_a_bulk_add_refuses_a_model_already_added_and_names_it(api, user):
    _existing(user)
    before = LLMModel.objects.count()
    response = api.post(
        "/api/models",
        [
            {"api_endpoint": ENDPOINT, "model_id": "qwen"},
            # The same server written another way: a trailing slash, the host's case.
            {"api_endpoint": "http://LOCALHOST:1/v1/", "model_id": "llama3"},
        ],
        format="json",
    )
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["detail"] == "Already added as “My Llama”."
    assert body["errors"] == [{}, {"model_id": ["Already added as “My Llama”."]}]
    assert LLMModel.objects.count() == before  # all or nothing


def test_the_same_model_with_another_key_is_another_configuration(api, user):
    _existing(user, api_key=KEY)
    refused = api.post(
        "/api/models",
        [{"api_endpoint": ENDPOINT, "model_id": "llama3", "api_key": KEY}],
        format="json",
    )
    assert refused.status_code == 400
    assert refused.json()["errors"] == {"model_id": ["Already added as “My Llama”."]}
    assert KEY not in refused.content.decode()
    other_key = api.post(
        "/api/models",
        [{"api_endpoint": ENDPOINT, "model_id": "llama3", "api_key": "sk-another"}],
        format="json",
    )
    no_key = api.post(
        "/api/models", [{"api_endpoint": ENDPOINT, "model_id": "llama3"}], format="json"
    )
    assert other_key.status_code == 201 and no_key.status_code == 201


def test_an_ollama_root_and_its_v1_are_one_server(api, user):
    _existing(user, provider="ollama", api_endpoint="http://localhost:1", model_id="qwen2.5:7b")
    response = api.post(
        "/api/models",
        [{"api_endpoint": "http://localhost:1/v1", "model_id": "qwen2.5:7b", "provider": "ollama"}],
        format="json",
    )
    assert response.status_code == 400
    assert "My Llama" in response.json()["detail"]


def test_a_batch_that_names_a_model_twice_is_refused(api):
    response = api.post(
        "/api/models",
        [
            {"api_endpoint": ENDPOINT, "model_id": "twin"},
            {"api_endpoint": ENDPOINT, "model_id": "twin", "name": "Twin two"},
        ],
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0] == {}
    assert response.json()["errors"][1] == {
        "model_id": ["This model appears twice in this request."]
    }


def test_one_at_a_time_the_same_model_may_be_added_again(api, user):
    _existing(user)
    again = api.post(
        "/api/models",
        {"api_endpoint": ENDPOINT, "model_id": "llama3", "config": {"temperature": 1.2}},
        format="json",
    )
    assert again.status_code == 201
    assert again.json()["name"] != "My Llama"


def test_another_users_model_is_no_duplicate(api, other_user):
    _existing(other_user)
    response = api.post(
        "/api/models", [{"api_endpoint": ENDPOINT, "model_id": "llama3"}], format="json"
    )
    assert response.status_code == 201, response.content
