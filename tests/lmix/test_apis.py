"""The authoring REST API: CRUD, validation, isolation between users, models' special rules."""

import pytest

from authoring.models import Persona
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    LLMModelFactory,
    PersonaFactory,
    ScenarioFactory,
    WorldFactory,
)

pytestmark = pytest.mark.django_db

RESOURCES = {
    "worlds": (WorldFactory, {"name": "Mars", "description": "Red dust."}, "name"),
    "scenarios": (ScenarioFactory, {"name": "Landing", "description": "We land."}, "name"),
    "affiliations": (
        AffiliationFactory,
        {"name": "Guild", "universal_truth": "u", "internal_truth": "i", "external_truth": "e"},
        "internal_truth",
    ),
    "personas": (PersonaFactory, {"name": "Ada", "internal_truth": "secret"}, "name"),
}


@pytest.mark.parametrize("resource", RESOURCES)
def test_crud_round_trip(api, resource):
    _, payload, field = RESOURCES[resource]
    created = api.post(f"/api/{resource}", payload, format="json")
    assert created.status_code == 201, created.content
    object_id = created.json()["id"]

    assert [item["id"] for item in api.get(f"/api/{resource}").json()] == [object_id]
    assert api.get(f"/api/{resource}/{object_id}/").json()[field] == payload[field]

    patched = api.patch(f"/api/{resource}/{object_id}", {field: "changed"}, format="json")
    assert patched.status_code == 200 and patched.json()[field] == "changed"
    full = api.put(f"/api/{resource}/{object_id}", {**payload, "name": "Renamed"}, format="json")
    assert full.status_code == 200 and full.json()["name"] == "Renamed"

    assert api.delete(f"/api/{resource}/{object_id}").status_code == 204
    assert api.get(f"/api/{resource}/{object_id}").status_code == 404


@pytest.mark.parametrize("resource", [*RESOURCES, "assistants", "models"])
def test_other_users_objects_are_invisible_and_untouchable(api, user, other_api, resource):
    factory = {
        **{k: v[0] for k, v in RESOURCES.items()},
        "assistants": AssistantFactory,
        "models": LLMModelFactory,
    }[resource]
    mine = factory(owner=user)

    listed = [item["id"] for item in other_api.get(f"/api/{resource}").json()]
    assert str(mine.id) not in listed
    assert other_api.get(f"/api/{resource}/{mine.id}").status_code == 404
    assert (
        other_api.patch(f"/api/{resource}/{mine.id}", {"name": "x"}, format="json").status_code
        == 404
    )
    assert other_api.delete(f"/api/{resource}/{mine.id}").status_code == 404
    assert api.get(f"/api/{resource}/{mine.id}").status_code == 200


@pytest.mark.parametrize("resource", [*RESOURCES, "assistants", "models"])
def test_anonymous_requests_are_told_to_sign_in(anon_client, resource):
    response = anon_client.get(f"/api/{resource}")
    assert response.status_code == 401
    assert "detail" in response.json()


@pytest.mark.parametrize("resource", ["worlds", "scenarios"])
def test_missing_and_oversized_fields_get_per_field_messages(api, resource):
    missing = api.post(f"/api/{resource}", {}, format="json")
    assert missing.status_code == 400
    assert set(missing.json()["errors"]) == {"name", "description"}

    oversized = api.post(
        f"/api/{resource}", {"name": "x" * 201, "description": "y" * 20_001}, format="json"
    )
    assert oversized.status_code == 400
    errors = oversized.json()["errors"]
    assert "200" in errors["name"][0] and "20000" in errors["description"][0]


def test_malformed_json_and_wrong_types_are_400(api):
    bad = api.generic("POST", "/api/worlds", "{not json", content_type="application/json")
    assert bad.status_code == 400 and "JSON" in bad.json()["detail"]
    listy = api.post("/api/worlds", [1, 2], format="json")
    assert listy.status_code == 400
    nul = api.post("/api/worlds", {"name": "a\x00b", "description": "d"}, format="json")
    assert nul.status_code == 400


def test_unknown_ids_and_paths_are_404_json(api):
    assert api.get("/api/worlds/00000000-0000-0000-0000-000000000000").status_code == 404
    assert api.get("/api/worlds/not-a-uuid").status_code == 404
    response = api.get("/api/nothing-here")
    assert response.status_code == 404 and "detail" in response.json()


def test_persona_affiliations_are_set_and_limited_to_own_groups(api, user, other_user):
    mine = AffiliationFactory(owner=user)
    theirs = AffiliationFactory(owner=other_user)
    created = api.post(
        "/api/personas", {"name": "Ada", "affiliations": [str(mine.id)]}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["affiliations"] == [str(mine.id)]
    joined_at = Persona.objects.get().memberships.get().joined_at

    refused = api.patch(
        f"/api/personas/{created.json()['id']}",
        {"affiliations": [str(mine.id), str(theirs.id)]},
        format="json",
    )
    assert refused.status_code == 400 and "affiliations" in refused.json()["errors"]

    second = AffiliationFactory(owner=user)
    kept = api.patch(
        f"/api/personas/{created.json()['id']}",
        {"affiliations": [str(mine.id), str(second.id)]},
        format="json",
    )
    assert sorted(kept.json()["affiliations"]) == sorted([str(mine.id), str(second.id)])
    assert Persona.objects.get().memberships.get(affiliation=mine).joined_at == joined_at


def test_assistant_pairs_own_persona_and_model_once(api, user, other_user):
    persona = PersonaFactory(owner=user)
    model = LLMModelFactory(owner=user)
    payload = {
        "persona": str(persona.id),
        "model": str(model.id),
        "config_override": {"temperature": 0.3},
    }
    created = api.post("/api/assistants", payload, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["display_name"] == persona.name and body["model_name"] == model.name

    duplicate = api.post("/api/assistants", payload, format="json")
    assert duplicate.status_code == 400 and "model" in duplicate.json()["errors"]

    foreign = PersonaFactory(owner=other_user)
    refused = api.post(
        "/api/assistants", {"persona": str(foreign.id), "model": str(model.id)}, format="json"
    )
    assert refused.status_code == 400 and "persona" in refused.json()["errors"]

    bad_config = api.post(
        "/api/assistants",
        {
            "persona": str(PersonaFactory(owner=user).id),
            "model": str(model.id),
            "config_override": {"temperature": 9},
        },
        format="json",
    )
    assert bad_config.status_code == 400 and "config_override" in bad_config.json()["errors"]
