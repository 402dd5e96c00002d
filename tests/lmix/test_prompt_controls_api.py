"""The prompt-control API: parameters and templates validated with a clear 400, the presets
and default template offered, and each world's lorebook its owner's alone."""

import pytest

from authoring.models import LoreEntry
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    PersonaFactory,
    WorldFactory,
)

pytestmark = pytest.mark.django_db


def test_the_forms_get_the_presets_the_default_template_and_its_placeholders(api, anon_client):
    body = api.get("/api/prompt-controls").json()
    assert [preset["name"] for preset in body["presets"]] == ["Balanced", "Creative", "Precise"]
    assert body["presets"][1]["params"]["temperature"] == 1.1
    assert "{{knowledge}}" in body["default_template"]
    assert {"char", "user", "world", "scenario", "knowledge", "lore"} <= {
        p["name"] for p in body["placeholders"]
    }
    assert anon_client.get("/api/prompt-controls").status_code == 401


def test_an_assistant_keeps_every_prompt_control(api, user):
    assistant = AssistantFactory(owner=user)
    config = {
        "temperature": 1.1,
        "top_p": 0.98,
        "max_tokens": 300,
        "context_size": 4096,
        "stop": ["\nBob:", "END"],
        "frequency_penalty": 0.3,
        "presence_penalty": -0.4,
    }
    template = "You are {{ char }}.\n{{knowledge}}"
    response = api.patch(
        f"/api/assistants/{assistant.id}",
        {"config_override": config, "system_prompt_template": template},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["config_override"] == config
    assert response.json()["system_prompt_template"] == template


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": -0.1}, "top_p"),
        ({"context_size": 100}, "context_size"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"frequency_penalty": "high"}, "frequency_penalty"),
        ({"presence_penalty": 2.5}, "presence_penalty"),
        ({"seed": 3}, "seed"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(api, user, config, field):
    assistant = AssistantFactory(owner=user)
    response = api.patch(
        f"/api/assistants/{assistant.id}", {"config_override": config}, format="json"
    )
    assert response.status_code == 400
    assert field in str(response.json()["errors"]["config_override"])
    model = assistant.model
    response = api.patch(f"/api/models/{model.id}", {"config": config}, format="json")
    assert response.status_code == 400 and field in str(response.json()["errors"]["config"])


def test_a_template_with_unknown_placeholders_is_a_400_naming_them(api, user):
    assistant = AssistantFactory(owner=user)
    response = api.patch(
        f"/api/assistants/{assistant.id}",
        {"system_prompt_template": "{{char}} knows {{secrets_of:Bob}} and {{mood}}"},
        format="json",
    )
    assert response.status_code == 400
    (message,) = response.json()["errors"]["system_prompt_template"]
    assert message.startswith("Unknown placeholders: {{mood}}, {{secrets_of:Bob}}.")
    response = api.patch(
        f"/api/assistants/{assistant.id}",
        {"system_prompt_template": "{{knowledge}}{{knowledge}}"},
        format="json",
    )
    assert response.json()["errors"]["system_prompt_template"] == [
        "{{knowledge}} may appear only once."
    ]


def test_a_world_keeps_its_lore_settings_within_range(api, user):
    world = WorldFactory(owner=user)
    url = f"/api/worlds/{world.id}"
    assert api.get(url).json()["lore_scan_depth"] == 4
    patched = api.patch(url, {"lore_scan_depth": 8, "lore_budget": 900}, format="json")
    assert patched.json()["lore_scan_depth"] == 8 and patched.json()["lore_budget"] == 900
    bad = api.patch(url, {"lore_scan_depth": 51, "lore_budget": -1}, format="json")
    assert bad.status_code == 400 and set(bad.json()["errors"]) >= {
        "lore_scan_depth",
        "lore_budget",
    }


def test_lore_crud_round_trip(api, user):
    world = WorldFactory(owner=user)
    group = AffiliationFactory(owner=user)
    url = f"/api/worlds/{world.id}/lore"
    created = api.post(
        url,
        {
            "keys": [" Vault ", "vault", "Sun  Stone"],
            "content": "The vault opens at dawn.",
            "layer": "affiliation",
            "affiliation": str(group.id),
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    entry = created.json()
    assert entry["keys"] == ["Vault", "Sun Stone"]  # trimmed, one of each whatever its case
    assert entry["world"] == str(world.id) and entry["enabled"] is True
    assert [e["id"] for e in api.get(url).json()] == [entry["id"]]

    # Made public: the group it was restricted to goes with the layer.
    patched = api.patch(f"{url}/{entry['id']}", {"layer": "universal"}, format="json")
    assert patched.status_code == 200 and patched.json()["affiliation"] is None
    assert (
        api.patch(f"{url}/{entry['id']}", {"enabled": False}, format="json").json()["enabled"]
        is False
    )
    assert api.delete(f"{url}/{entry['id']}").status_code == 204
    assert not LoreEntry.objects.exists()


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        ({"layer": "affiliation"}, "affiliation", "Choose the affiliation"),
        ({"layer": "persona"}, "persona", "Choose the persona"),
        ({"layer": "universal", "persona": "PERSONA"}, "persona", "takes no persona"),
        ({"layer": "secret"}, "layer", "not a valid choice"),
        ({"keys": []}, "keys", ""),
        ({"keys": ["  "]}, "keys", "at least one keyword"),
        ({"keys": "vault"}, "keys", ""),
        ({"content": ""}, "content", ""),
        ({"priority": 1000}, "priority", ""),
    ],
)
def test_a_bad_lore_entry_is_a_400_saying_what_is_wrong(api, user, payload, field, message):
    world = WorldFactory(owner=user)
    persona = PersonaFactory(owner=user)
    body = {"keys": ["vault"], "content": "c", **payload}
    if body.get("persona") == "PERSONA":
        body["persona"] = str(persona.id)
    response = api.post(f"/api/worlds/{world.id}/lore", body, format="json")
    assert response.status_code == 400
    assert message in str(response.json()["errors"][field])


def test_the_lorebook_is_its_owners_alone(api, other_api, user, other_user):
    world = WorldFactory(owner=user)
    entry = LoreEntry.objects.create(owner=user, world=world, keys=["k"], content="LORE-MARKER")
    theirs = WorldFactory(owner=other_user)
    url = f"/api/worlds/{world.id}/lore"
    for response in (
        other_api.get(url),
        other_api.get(f"{url}/{entry.id}"),
        other_api.patch(f"{url}/{entry.id}", {"content": "x"}, format="json"),
        other_api.delete(f"{url}/{entry.id}"),
        other_api.post(url, {"keys": ["k"], "content": "c"}, format="json"),
        # Nor through a world of one's own: an entry lives under its world only.
        other_api.get(f"/api/worlds/{theirs.id}/lore/{entry.id}"),
    ):
        assert response.status_code == 404
        assert "LORE-MARKER" not in response.content.decode()
    # Another user's group or persona cannot restrict one's entry either.
    their_group = AffiliationFactory(owner=other_user)
    response = api.post(
        url,
        {"keys": ["k"], "content": "c", "layer": "affiliation", "affiliation": str(their_group.id)},
        format="json",
    )
    assert response.status_code == 400 and "affiliation" in response.json()["errors"]
    entry.refresh_from_db()
    assert entry.content == "LORE-MARKER"
