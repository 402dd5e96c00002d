"""Deletes never change a production or frame behind its owner's back: while one uses an
object, deleting it is a 409 naming them and nothing is deleted; unused, it goes."""

import pytest

from authoring.models import Affiliation, Assistant, Membership, Persona, Scenario, World
from lmix.models import LLMModel
from productions.models import CastMember, Production
from synthesis.frames import frame_create
from synthesis.models import Frame
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    LLMModelFactory,
    PersonaFactory,
    ScenarioFactory,
    WorldFactory,
)
from tests.productions.conftest import make_production

pytestmark = pytest.mark.django_db


@pytest.fixture
def production(user):
    model = LLMModelFactory(owner=user, name="Narrator")
    made = make_production(user, model=model, size=2)
    Production.objects.filter(pk=made.pk).update(name="Therapy")
    return Production.objects.get(pk=made.pk)


def refused(api, path: str) -> dict:
    response = api.delete(path)
    assert response.status_code == 409, response.content
    return response.json()


def test_a_persona_in_a_production_and_a_frame_is_refused_with_their_names(api, production):
    frame_create(production=production, name="Friday game")
    persona = production.cast.first().assistant.persona

    body = refused(api, f"/api/personas/{persona.id}")

    assert body["detail"].startswith(
        "Used by the production “Therapy” and the frame “Friday game”."
    )
    assert [(u["kind"], u["name"]) for u in body["errors"]["used_by"]] == [
        ("production", "Therapy"),
        ("frame", "Friday game"),
    ]
    assert Persona.objects.filter(pk=persona.pk).exists()
    assert production.cast.count() == 2  # the production keeps its whole cast


def test_an_assistant_in_a_production_is_refused_and_the_cast_stays(api, production):
    assistant = production.cast.first().assistant
    body = refused(api, f"/api/assistants/{assistant.id}")
    assert "“Therapy”" in body["detail"]
    assert Assistant.objects.filter(pk=assistant.pk).exists()
    assert CastMember.objects.filter(production=production).count() == 2


def test_a_model_its_cast_plays_on_is_refused(api, production):
    model = production.cast.first().assistant.model
    body = refused(api, f"/api/models/{model.id}")
    assert body["detail"].startswith("Used by the production “Therapy”.")
    assert LLMModel.objects.filter(pk=model.pk).exists()


def test_a_model_a_frame_narrates_with_is_refused(api, user, production):
    narrator = LLMModelFactory(owner=user, name="Medium")
    frame_create(production=production, name="Night", soft_model=narrator, medium_model=narrator)
    body = refused(api, f"/api/models/{narrator.id}")
    assert body["detail"].startswith("Used by the frame “Night”.")
    assert Frame.objects.get(name="Night").medium_model_id == narrator.pk


def test_a_world_and_a_scenario_in_use_are_refused_with_the_production_named(api, production):
    assert "“Therapy”" in refused(api, f"/api/worlds/{production.world_id}")["detail"]
    assert "“Therapy”" in refused(api, f"/api/scenarios/{production.scenario_id}")["detail"]
    assert World.objects.filter(pk=production.world_id).exists()
    assert Scenario.objects.filter(pk=production.scenario_id).exists()


def test_many_users_are_named_up_to_five_then_counted(api, user):
    world = WorldFactory(owner=user)
    model = LLMModelFactory(owner=user)
    cast = [AssistantFactory(owner=user, model=model) for _ in range(2)]
    for n in range(7):
        made = make_production(user, model=model, size=2)
        Production.objects.filter(pk=made.pk).update(name=f"P{n}", world=world)
        made.cast.all().delete()
        CastMember.objects.bulk_create([CastMember(production=made, assistant=a) for a in cast])
    detail = refused(api, f"/api/worlds/{world.id}")["detail"]
    assert detail.startswith("Used by the productions “P0”, “P1”, “P2”, “P3”, “P4” and 2 more.")


@pytest.mark.parametrize(
    ("resource", "factory"),
    [
        ("worlds", WorldFactory),
        ("scenarios", ScenarioFactory),
        ("affiliations", AffiliationFactory),
        ("personas", PersonaFactory),
        ("assistants", AssistantFactory),
        ("models", LLMModelFactory),
    ],
)
def test_an_unused_object_is_deleted(api, user, production, resource, factory):
    unused = factory(owner=user)
    assert api.delete(f"/api/{resource}/{unused.id}").status_code == 204
    assert not type(unused).objects.filter(pk=unused.pk).exists()
    assert production.cast.count() == 2


def test_an_unused_persona_takes_its_unused_assistants_with_it(api, user):
    persona = PersonaFactory(owner=user)
    assistant = AssistantFactory(owner=user, persona=persona)
    assert api.delete(f"/api/personas/{persona.id}").status_code == 204
    assert not Assistant.objects.filter(pk=assistant.pk).exists()


def test_an_affiliation_with_members_in_a_production_is_deleted_and_they_leave_it(
    api, user, production
):
    # Its members are in a production, but only their knowledge changes (as with an
    # edit of the group's truths): no cast, seat or model goes.
    persona = production.cast.first().assistant.persona
    group = AffiliationFactory(owner=user, name="Guild")
    persona.affiliations.add(group)
    assert api.delete(f"/api/affiliations/{group.id}").status_code == 204
    assert not Affiliation.objects.filter(pk=group.pk).exists()
    assert not Membership.objects.filter(persona=persona, affiliation_id=group.pk).exists()
    assert production.cast.count() == 2


def test_a_persona_seated_in_a_frame_only_is_refused(api, user, production):
    # Its assistant left the cast after the frame was made: the seat still needs it.
    frame_create(production=production, name="Old game")
    member = production.cast.first()
    persona = member.assistant.persona
    member.delete()
    body = refused(api, f"/api/personas/{persona.id}")
    assert body["detail"].startswith("Used by the frame “Old game”.")
