"""LLM models: normalisation, write-only encrypted keys, bulk add, one default, duplicates."""

import pytest
from django.db import IntegrityError, connection, transaction

from lmix.models import OFFLINE_ENDPOINT, LLMModel
from tests.factories import LLMModelFactory

pytestmark = pytest.mark.django_db

KEY = "sk-MARKER-never-returned-7731"


def test_new_users_get_the_offline_narrator_as_default(user):
    (model,) = LLMModel.objects.filter(owner=user)
    assert model.api_endpoint == OFFLINE_ENDPOINT and model.provider == "offline"
    assert model.is_default


def test_create_normalises_endpoint_infers_provider_and_names_the_model(api):
    response = api.post(
        "/api/models",
        {
            "api_endpoint": " https://api.openai.com/v1/chat/completions/ ",
            "model_id": "gpt-4-turbo-preview",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["api_endpoint"] == "https://api.openai.com/v1"
    assert body["provider"] == "openai"
    assert body["name"] == "GPT-4 Turbo Preview"
    assert body["has_api_key"] is False


def test_api_key_is_write_only_and_encrypted_at_rest(api):
    created = api.post(
        "/api/models",
        {"api_endpoint": "https://api.anthropic.com/v1", "model_id": "claude-x", "api_key": KEY},
        format="json",
    )
    assert created.status_code == 201
    assert KEY not in created.content.decode()
    assert created.json()["has_api_key"] is True and created.json()["provider"] == "anthropic"

    model = LLMModel.objects.get(pk=created.json()["id"])
    assert model.api_key == KEY
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key_encrypted FROM lmix_llmmodel WHERE model_id = 'claude-x'")
        (stored,) = cursor.fetchone()
    assert stored and KEY not in stored

    for response in (api.get("/api/models"), api.get(f"/api/models/{model.id}")):
        assert KEY not in response.content.decode()
    schema = api.get("/api/schema?format=json").content.decode()
    assert KEY not in schema


def test_updating_without_a_key_keeps_it_and_null_clears_it(api, user):
    model = LLMModelFactory(owner=user)
    model.api_key = KEY
    model.save()
    api.patch(f"/api/models/{model.id}", {"name": "Renamed", "api_key": ""}, format="json")
    model.refresh_from_db()
    assert model.name == "Renamed" and model.api_key == KEY

    api.patch(f"/api/models/{model.id}", {"api_key": None}, format="json")
    model.refresh_from_db()
    assert model.api_key == "" and not model.has_api_key


def test_bulk_add_is_all_or_nothing_with_errors_per_item(api, user):
    LLMModelFactory(owner=user, model_id="taken", api_endpoint="http://localhost:1234/v1")
    before = LLMModel.objects.count()
    response = api.post(
        "/api/models",
        [
            {"api_endpoint": "http://localhost:1234/v1", "model_id": "fresh"},
            {"api_endpoint": "http://localhost:1234/v1/", "model_id": "taken"},
            {"api_endpoint": "not a url", "model_id": "other"},
        ],
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors[0] == {} and errors[1] == {} and "api_endpoint" in errors[2]
    assert LLMModel.objects.count() == before

    duplicate = api.post(
        "/api/models",
        [
            {"api_endpoint": "http://localhost:1234/v1", "model_id": "fresh", "name": "Twin"},
            {"api_endpoint": "http://localhost:1234/v1", "model_id": "other", "name": "Twin"},
        ],
        format="json",
    )
    assert duplicate.status_code == 400
    assert duplicate.json()["errors"][0] == {} and "name" in duplicate.json()["errors"][1]
    assert LLMModel.objects.count() == before

    ok = api.post(
        "/api/models",
        [
            {"api_endpoint": "http://localhost:11434", "model_id": "llama3.1:8b"},
            {"api_endpoint": "http://localhost:11434", "model_id": "qwen2.5:7b"},
        ],
        format="json",
    )
    assert ok.status_code == 201
    assert [m["provider"] for m in ok.json()] == ["ollama", "ollama"]
    assert LLMModel.objects.count() == before + 2


def test_one_default_per_user(api, user):
    first = LLMModelFactory(owner=user)
    second = LLMModelFactory(owner=user)
    assert api.patch(f"/api/models/{first.id}/default").json()["is_default"] is True
    assert api.patch(f"/api/models/{second.id}/default").status_code == 200
    defaults = LLMModel.objects.filter(owner=user, is_default=True)
    assert list(defaults.values_list("id", flat=True)) == [second.id]


def test_the_database_refuses_a_second_default_and_a_duplicate_name(user):
    LLMModelFactory(owner=user, is_default=False, name="Mine", api_endpoint="http://a/v1")
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMModelFactory(owner=user, is_default=True)  # the offline narrator is already default
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMModelFactory(owner=user, name="Mine", api_endpoint="http://b/v1")


def test_the_same_endpoint_and_model_id_can_be_added_again_with_other_parameters(api, user):
    one = {"api_endpoint": "http://localhost:1234/v1", "model_id": "llama3"}
    first = api.post("/api/models", one, format="json")
    second = api.post(
        "/api/models", {**one, "name": "Llama 3 hot", "config": {"temperature": 1.5}}, format="json"
    )
    generated = api.post("/api/models", one, format="json")
    assert [r.status_code for r in (first, second, generated)] == [201, 201, 201]
    assert second.json()["config"] == {"temperature": 1.5}
    names = [first.json()["name"], second.json()["name"], generated.json()["name"]]
    assert names == ["Llama 3", "Llama 3 hot", "Llama 3 (2)"]
    assert LLMModel.objects.filter(owner=user, model_id="llama3").count() == 3


def test_a_name_already_used_is_a_clear_400(api, user):
    LLMModelFactory(owner=user, name="Mine")
    other = LLMModelFactory(owner=user, name="Other")
    created = api.post(
        "/api/models",
        {"api_endpoint": "http://localhost:1234/v1", "model_id": "m", "name": " Mine "},
        format="json",
    )
    assert created.status_code == 400
    assert created.json()["errors"] == {
        "name": ["You already have a model named 'Mine'; choose another."]
    }
    renamed = api.patch(f"/api/models/{other.id}", {"name": "Mine"}, format="json")
    assert renamed.status_code == 400 and "name" in renamed.json()["errors"]
    other.refresh_from_db()
    assert other.name == "Other"
    # Keeping its own name is no clash.
    assert api.patch(f"/api/models/{other.id}", {"model_id": "x"}, format="json").status_code == 200


def test_the_offline_narrator_is_given_once_even_beside_a_second_one(user):
    from lmix.services import offline_model_ensure

    narrator = LLMModel.objects.get(owner=user)
    LLMModelFactory(
        owner=user, name="Narrator 2", model_id="narrator", api_endpoint=OFFLINE_ENDPOINT
    )
    assert offline_model_ensure(owner=user) == narrator


def test_invalid_config_is_refused_before_it_reaches_a_provider(api):
    response = api.post(
        "/api/models",
        {
            "api_endpoint": "http://localhost:8080/v1",
            "model_id": "m",
            "config": {"temperature": 7, "bogus": 1},
        },
        format="json",
    )
    assert response.status_code == 400 and "config" in response.json()["errors"]


def test_connection_test_makes_a_real_round_trip(api):
    from tests.fakes.llm_server import FakeLLMServer

    with FakeLLMServer(models=["alpha", "beta"]) as server:
        ok = api.post("/api/models/test", {"api_endpoint": server.base_url}, format="json")
        assert ok.status_code == 200
        body = ok.json()
        assert body["ok"] is True and body["models"] == ["alpha", "beta"]
        assert body["latency_ms"] >= 0

        server.queue(status=401)
        refused = api.post(
            "/api/models/test",
            {"api_endpoint": server.base_url, "api_key": KEY},
            format="json",
        ).json()
        assert refused["ok"] is False and "key" in refused["error"].lower()
        assert KEY not in str(refused)
        assert server.requests[-1].api_key == KEY  # the key did reach the provider


def test_connection_test_of_a_saved_model_uses_its_stored_key(api, user, other_api):
    from tests.fakes.llm_server import FakeLLMServer

    with FakeLLMServer() as server:
        model = LLMModelFactory(owner=user, api_endpoint=server.base_url)
        model.api_key = KEY
        model.save()
        assert api.post("/api/models/test", {"id": str(model.id)}, format="json").json()["ok"]
        assert server.requests[-1].api_key == KEY
        assert (
            other_api.post("/api/models/test", {"id": str(model.id)}, format="json").status_code
            == 404
        )


def test_an_empty_bulk_add_is_refused(api):
    response = api.post("/api/models", [], format="json")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "payload",
    [
        {"api_endpoint": "http://[::1", "model_id": "m"},
        [None],
        ["text"],
        {"api_endpoint": "http://localhost:1/v1", "model_id": ["m"]},
    ],
)
def test_odd_model_input_is_a_clear_400(api, payload):
    before = LLMModel.objects.count()
    response = api.post("/api/models", payload, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["detail"]
    assert LLMModel.objects.count() == before


def test_a_long_model_id_gets_a_name_that_fits(api):
    model_id = "x" + "-20240229" * 22
    response = api.post(
        "/api/models",
        {"api_endpoint": "http://localhost:1/v1", "model_id": model_id},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["model_id"] == model_id
    assert 0 < len(response.json()["name"]) <= 200


def test_moving_a_model_to_another_host_drops_its_key(api, user):
    model = LLMModelFactory(owner=user, api_endpoint="https://api.openai.com/v1")
    model.api_key = KEY
    model.save()
    api.patch(
        f"/api/models/{model.id}", {"api_endpoint": "https://api.openai.com/v1/"}, format="json"
    )
    model.refresh_from_db()
    assert model.api_key == KEY  # same host: kept
    api.patch(
        f"/api/models/{model.id}", {"api_endpoint": "https://elsewhere.example/v1"}, format="json"
    )
    model.refresh_from_db()
    assert model.api_key == "" and model.api_endpoint == "https://elsewhere.example/v1"
    api.patch(
        f"/api/models/{model.id}",
        {"api_endpoint": "https://third.example/v1", "api_key": "sk-new"},
        format="json",
    )
    model.refresh_from_db()
    assert model.api_key == "sk-new"
