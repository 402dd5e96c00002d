"""The state pass's prompt (templates/synthesis/state.txt): public only. It is built from
the outcome, which everyone present read, and the witnesses' public faces (universal and
external truth, their public names), never from anyone's internal truth, group secrets,
narratives or current state: one call proposes every witness's changes, so whatever it
reads could end up in any of their memories."""

from lmix.llm.base import Message

from ..medium.context import flat
from ..medium.prompts import outcome_lines, public_character, result_act, template
from ..models import Frame, Outcome, Seat
from .schema import StateScene

OUTCOME_MAX = 20000  # the outcome's lines (its own fields are bounded where it is stored)
CHARACTER_MAX = 2000  # one witness's public face


def state_messages(
    *, frame: Frame, outcome: Outcome, witnesses: list[Seat], labels: dict
) -> list[Message]:
    """What the state call is sent about `outcome`, for its `witnesses`."""
    system, user = template("state.txt")
    production = frame.production
    system = system.format(
        world_name=production.world.name,
        world=production.world.description.strip(),
        scenario_name=production.scenario.name,
        scenario=production.scenario.description.strip(),
        characters="\n".join(public_character(s, labels[s.pk])[:CHARACTER_MAX] for s in witnesses),
    )
    user = user.format(outcome=outcome_lines(outcome, labels)[:OUTCOME_MAX])
    return [Message("system", system), Message("user", user)]


def state_scene(*, outcome: Outcome, witnesses: list[Seat], labels: dict) -> StateScene:
    """What the offline narrator answers from: the same public facts as the prompt."""
    names = {str(pk): name for pk, name in labels.items()}
    return StateScene(
        witnesses=tuple(labels[s.pk] for s in witnesses),
        acts=tuple(result_act(entry, labels) for entry in outcome.actions_resolved),
        facts=tuple(flat(fact) for fact in outcome.world_facts),
        aimed_at=tuple(
            names[str(i.get("seat"))] for i in outcome.interrupts if str(i.get("seat")) in names
        ),
    )
