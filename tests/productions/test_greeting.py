"""A persona's greeting opens a new production as its first turn, as in chat front ends."""

import pytest

from lmix.models import LLMCall
from productions.generation import turn_generate
from productions.models import Turn

pytestmark = pytest.mark.django_db


def pending(production, assistant, parent=None) -> Turn:
    return Turn.objects.create(
        production=production,
        parent=parent,
        depth=0 if parent is None else parent.depth + 1,
        speaker_kind="assistant",
        assistant=assistant,
        speaker_name=assistant.persona.name,
        status="pending",
    )


@pytest.fixture
def opener(user, production_factory):
    production = production_factory(user, size=2)
    assistant = production.cast.first().assistant
    assistant.persona.greeting = "  *wipes a glass* We're closed, officer.  "
    assistant.persona.save()
    return production, assistant


def test_the_first_turn_is_the_greeting_without_a_model_call(opener):
    production, assistant = opener
    turn = pending(production, assistant)
    turn_generate(turn_id=turn.pk)
    turn.refresh_from_db()
    assert (turn.status, turn.content) == ("done", "*wipes a glass* We're closed, officer.")
    assert not LLMCall.objects.exists()


def test_regenerating_the_opening_or_a_later_turn_asks_the_model(opener):
    production, assistant = opener
    first = pending(production, assistant)
    turn_generate(turn_id=first.pk)
    again = pending(production, assistant)  # a sibling of the opening: a regeneration
    turn_generate(turn_id=again.pk)
    later = pending(production, assistant, parent=first)
    turn_generate(turn_id=later.pk)
    for turn in (again, later):
        turn.refresh_from_db()
        assert turn.status == "done" and "We're closed, officer" not in turn.content
    assert LLMCall.objects.count() == 2
