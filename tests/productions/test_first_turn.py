"""A new user's first production: its own world of one line and two personas, its first
"Speak first" turn on the offline narrator, and a production created with every field."""

import pytest

from lmix.models import LLMModel
from productions.generation import turn_generate
from productions.models import Production, TurnStatus
from productions.services import turn_request
from tests.factories import AssistantFactory, PersonaFactory

pytestmark = pytest.mark.django_db


def create(api, user, **fields):
    world = api.post(
        "/api/worlds", {"name": "Ashfall", "description": "A volcanic island"}, format="json"
    )
    # A scenario with no sentence to set the scene: the narrator falls back on the world.
    scenario = api.post(
        "/api/scenarios", {"name": "Arrival", "description": "ferry docks"}, format="json"
    )
    model = LLMModel.objects.get(owner=user, provider="offline")
    cast = [
        AssistantFactory(owner=user, model=model, persona=PersonaFactory(owner=user, name=name))
        for name in ("Mara", "Ilse")
    ]
    body = {
        "name": "First night",
        "world": world.json()["id"],
        "scenario": scenario.json()["id"],
        "assistants": [str(a.pk) for a in cast],
        **fields,
    }
    return api.post("/api/productions", body, format="json")


def test_the_first_speak_first_turn_of_a_one_line_world_is_narrated(api, user):
    """It once failed with KeyError: 'world' (the offline narrator's setting line)."""
    response = create(api, user)
    assert response.status_code == 201, response.content
    production = Production.objects.get(pk=response.json()["id"])
    turn = turn_request(production=production)  # "Speak first": nobody chosen, no parent
    turn_generate(turn_id=turn.pk)
    turn.refresh_from_db()
    assert turn.status == TurnStatus.DONE, turn.error
    assert turn.content.strip() and "Ashfall" in turn.content
    assert turn.speaker_name in turn.content


@pytest.mark.parametrize("auto_reply", [True, False])
def test_a_production_is_created_with_every_documented_field(api, user, auto_reply):
    """`auto_reply` once answered 500: the service took no such keyword."""
    response = create(api, user, show_directive=True, auto_reply=auto_reply)
    assert response.status_code == 201, response.content
    assert response.json()["auto_reply"] is auto_reply
    production = Production.objects.get(pk=response.json()["id"])
    assert production.auto_reply is auto_reply and production.show_directive
