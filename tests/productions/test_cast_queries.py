"""Compiling every speaker's prompt costs a fixed number of queries, whatever the cast size."""

import pytest

from productions.knowledge import compile_knowledge
from productions.selectors import cast_load
from productions.services import production_create
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    PersonaFactory,
    ScenarioFactory,
    UserFactory,
    WorldFactory,
)


@pytest.mark.django_db
@pytest.mark.parametrize("size", [2, 6])
def test_loading_a_cast_takes_a_fixed_number_of_queries(size, django_assert_num_queries):
    owner = UserFactory()
    groups = [AffiliationFactory(owner=owner) for _ in range(3)]
    assistants = []
    for index in range(size):
        assistant = AssistantFactory(owner=owner, persona=PersonaFactory(owner=owner))
        assistant.persona.affiliations.set(groups[: index % 4])
        assistants.append(assistant)
    production = production_create(
        owner=owner,
        name="p",
        world=WorldFactory(owner=owner),
        scenario=ScenarioFactory(owner=owner),
        assistants=assistants,
    )
    with django_assert_num_queries(2):
        cast = cast_load(production=production)
        personas = [member.persona for member in cast]
        for speaker in personas:
            compile_knowledge(
                speaker=speaker, cast=personas, world=production.world, scenario=production.scenario
            )
