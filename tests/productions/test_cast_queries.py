"""Compiling every speaker's prompt costs a fixed number of queries, whatever the cast size."""

import pytest

from authoring.models import Persona
from productions.knowledge import knowledge_text
from productions.selectors import cast_load
from productions.services import production_create
from synthesis.frame_selectors import seats_for_prompts
from synthesis.frames import frame_create
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    PersonaFactory,
    ScenarioFactory,
    UserFactory,
    WorldFactory,
)


def make_cast(size: int):
    owner = UserFactory()
    groups = [AffiliationFactory(owner=owner) for _ in range(3)]
    assistants = []
    for index in range(size):
        persona = PersonaFactory(owner=owner, known_as=f"Alias {index}" if index % 3 else "")
        assistant = AssistantFactory(owner=owner, persona=persona)
        # Every other persona belongs covertly: the flag is what the compiler reads.
        assistant.persona.affiliations.set(
            groups[: index % 4], through_defaults={"covert": index % 2 == 1}
        )
        assistants.append(assistant)
    return production_create(
        owner=owner,
        name="p",
        world=WorldFactory(owner=owner),
        scenario=ScenarioFactory(owner=owner),
        assistants=assistants,
    )


def every_prompt(production, personas: list[Persona]) -> list[str]:
    """Each persona's prompt, the others its cast."""
    return [
        knowledge_text(
            speaker=speaker, cast=personas, world=production.world, scenario=production.scenario
        )
        for speaker in personas
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("size", [2, 6])
def test_loading_a_cast_takes_a_fixed_number_of_queries(size, django_assert_num_queries):
    production = make_cast(size)
    with django_assert_num_queries(2):
        cast = cast_load(production=production)
        personas = [member.persona for member in cast]
        prompts = every_prompt(production, personas)
    assert any("(covert: only fellow members know you belong)" in p for p in prompts)


@pytest.mark.django_db
@pytest.mark.parametrize("size", [2, 6])
def test_personas_loaded_without_memberships_cost_one_query_once(size, django_assert_num_queries):
    production = make_cast(size)
    personas = list(Persona.objects.filter(assistants__productions=production))
    with django_assert_num_queries(1):
        for speaker in personas:
            knowledge_text(
                speaker=speaker, cast=personas, world=production.world, scenario=production.scenario
            )


@pytest.mark.django_db
def test_a_frames_seats_for_prompts_compile_alike_with_no_query_more(django_assert_num_queries):
    production = make_cast(6)
    frame = frame_create(production=production, name="Scene")
    with django_assert_num_queries(2):
        seats = seats_for_prompts(frame=frame)
        personas = [seat.persona for seat in seats]
        prompts = every_prompt(production, personas)
    # The same prompts as from personas whose memberships Django prefetched.
    by_pk = {member.persona.pk: member.persona for member in cast_load(production=production)}
    assert prompts == every_prompt(production, [by_pk[persona.pk] for persona in personas])
    assert any("(covert: only fellow members know you belong)" in p for p in prompts)
