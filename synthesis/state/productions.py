"""Character state for a production's cast: the frames' state pass, fold and prompt
sections, applied to turns. Productions does not import synthesis (docs/layers.md), so this
module plugs into `productions/hooks.py` (`hooks_register`, from synthesis' AppConfig):

- a finished turn (`hooks.turn_done`) queues its state pass (`turn_state_pass_run`): one
  structured call on the public turn, the rules of `changes_allowed`, the offline
  narrator's answer, as after an outcome; every cast member witnesses a turn;
- its changes are `StateDelta` and `Memory` rows keyed by `turn` and `member`, with no
  cache: the state of a cast member is the fold of the deltas of the turns on the branch
  the head is on (`member_state`), and it recalls only memories of those turns. Rewinding
  (moving the head back) hides the later turns' state; moving it forward brings it back;
  another branch's turns never count;
- the speaker's prompt gains YOUR MEMORIES, YOUR RELATIONSHIPS and YOUR MOOD
  (`prompt_section`), each line as a frame's prompt writes it (components.py).
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from authoring.models import Assistant
from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Message
from lmix.llm.client import llm_structured
from lmix.llm.offline import Act
from lmix.realtime.leases import lease_claim, lease_held
from productions import events, hooks
from productions.knowledge import public_name
from productions.models import Production, SpeakerKind, Turn
from productions.selectors import cast_load, turn_branch

from ..enqueue import (
    TURN_STATE_PASS,
    turn_state_key,
    turn_state_pass_enqueue,
    turn_state_pass_send,
)
from ..medium.components import section_titles
from ..medium.context import flat
from ..medium.prompts import public_character, template
from ..state_models import DeltaKind, Memory, StateDelta, TurnStatePass
from .components import MEMORIES_K, edge_line, memory_lines, mood_lines
from .fold import CharacterValues, fold
from .levels import clamp, compiled_parameters, level
from .run import (
    PURPOSE,
    REPLY_TOKENS_BASE,
    REPLY_TOKENS_PER_WITNESS,
    UNEXPECTED,
    pass_finish,
    state_job,
)
from .schema import StateProposal, StateScene
from .selectors import MEMORY_CANDIDATES, rank_memories
from .services import changes_allowed, delta_values, memory_text

logger = logging.getLogger(__name__)
TURN_MAX = 20000
CHARACTER_MAX = 2000
DIRECTOR = "Narration"  # how a director's note reads in the state prompt


def hooks_register() -> None:
    """Plug character state into productions (synthesis/apps.py)."""
    hooks.turn_done.connect(_turn_done, dispatch_uid="synthesis_turn_state_pass")
    hooks.prompt_section_register(prompt_section)
    hooks.rewind_counter_register(rewind_counts)


def _turn_done(sender: object, turn: Turn, **kwargs: Any) -> None:
    turn_state_pass_enqueue(turn)


# The state pass of a turn.


def turn_state_pass_run(*, turn_id: object) -> TurnStatePass | None:
    """Run the state pass of `turn_id`, unless it ran (or runs) already.

    Returns:
        Its `TurnStatePass` (done or failed), or None: state passes are off
        (LMIX_STATE_PASSES), or another run has it (or had it).
    """
    if not settings.LMIX_STATE_PASSES:
        return None
    with lease_held() as owner:
        if not lease_claim(TURN_STATE, turn_id, owner):
            return None
        state_pass = TurnStatePass.objects.get(pk=turn_id)
        turn = Turn.objects.select_related("production__world", "production__scenario").get(
            pk=turn_id
        )
        tries: list[dict[str, Any]] = []
        try:
            if not turn.is_readable:  # deleted text meanwhile: nothing to read
                raise ApplicationError("The turn can no longer be read.")
            _run(turn, state_pass, tries)
        except (LLMError, ApplicationError) as error:
            pass_finish(state_pass, tries, error=flat(str(error), 2000))
        except Exception:
            logger.exception("the state pass of turn %s failed unexpectedly", turn.pk)
            pass_finish(state_pass, tries, error=UNEXPECTED)
        return state_pass


TURN_STATE = state_job(
    "turn state pass",
    TurnStatePass,
    TURN_STATE_PASS,
    turn_state_key,
    turn_state_pass_send,
    "a production turn's cast's state",
)


def _run(turn: Turn, state_pass: TurnStatePass, tries: list[dict[str, Any]]) -> None:
    production = turn.production
    cast = cast_load(production=production)
    if not cast:
        pass_finish(state_pass, tries)
        return
    labels = {member.pk: public_name(member.persona) for member in cast}
    messages = turn_state_messages(production=production, turn=turn, cast=cast, labels=labels)
    state_pass.messages = [m.as_dict() for m in messages]
    TurnStatePass.objects.filter(pk=state_pass.pk).update(messages=state_pass.messages)
    speaker = next((m for m in cast if m.pk == turn.assistant_id), cast[0])
    proposal = llm_structured(
        model=speaker.model,
        messages=messages,
        schema=StateProposal,
        purpose=PURPOSE,
        subject=f"turn:{turn.pk}",
        max_tokens=REPLY_TOKENS_BASE + REPLY_TOKENS_PER_WITNESS * len(cast),
        tries=tries,
        context=turn_scene(turn=turn, cast=cast, labels=labels),
    )
    with transaction.atomic():
        if not pass_finish(state_pass, tries):
            return  # taken over by a redelivered task meanwhile: it changes nothing
        if turn_state_apply(turn=turn, proposal=proposal, cast=cast, labels=labels):
            events.notify_cast_state(production.pk, turn.pk)


def _said(turn: Turn, labels: dict) -> tuple[str, str]:
    """Who said the turn (by the name everyone knows) and what."""
    if turn.speaker_kind == SpeakerKind.DIRECTOR or turn.assistant_id not in labels:
        return DIRECTOR, turn.content.strip()
    return labels[turn.assistant_id], turn.content.strip()


def turn_state_messages(
    *, production: Production, turn: Turn, cast: Sequence[Assistant], labels: dict
) -> list[Message]:
    """The frames' state prompt (templates/synthesis/state.txt), public only: the turn,
    said aloud before the whole cast, and the cast's public faces."""
    system, user = template("state.txt")
    system = system.format(
        world_name=production.world.name,
        world=production.world.description.strip(),
        scenario_name=production.scenario.name,
        scenario=production.scenario.description.strip(),
        characters="\n".join(
            public_character(member, labels[member.pk])[:CHARACTER_MAX] for member in cast
        ),
    )
    who, text = _said(turn, labels)
    user = user.format(outcome=f"- {who}: {text}"[:TURN_MAX])
    return [Message("system", system), Message("user", user)]


def turn_scene(*, turn: Turn, cast: Sequence[Assistant], labels: dict) -> StateScene:
    """What the offline narrator answers from: the turn as a cast member's successful act,
    a director's note as a fact."""
    who, text = _said(turn, labels)
    text = text.replace("*", "")  # Markdown's marks, not the story
    witnesses = tuple(labels[member.pk] for member in cast)
    if who == DIRECTOR:
        return StateScene(witnesses=witnesses, acts=(), facts=(flat(text, 300),))
    return StateScene(witnesses=witnesses, acts=(Act(who, flat(text, 300), "success"),), facts=())


@transaction.atomic
def turn_state_apply(
    *, turn: Turn, proposal: StateProposal, cast: Sequence[Assistant], labels: dict
) -> list[object]:
    """Apply a turn's state pass under the frames' rules (`changes_allowed`: the cast
    witnessed it), each delta clamped as a frame's (`delta_values`). No cache is moved: the
    fold of the head's branch is the state (`member_state`).

    Returns:
        The cast members whose state changed.
    """
    witnesses = {str(member.pk) for member in cast}
    allowed = changes_allowed(proposal, characters=cast, labels=labels, witnesses=witnesses)
    rows: list[StateDelta] = []
    for change in allowed:
        base = {"turn": turn, "member": change.character}
        for target, edge in change.edges:
            values = delta_values(
                kind=DeltaKind.EDGE, affinity=edge.affinity, trust=edge.trust, text=edge.fact
            )
            rows.append(StateDelta(**base, toward=target, **values))
        if change.mood or change.intensity:
            values = delta_values(kind=DeltaKind.MOOD, mood=change.mood, intensity=change.intensity)
            rows.append(StateDelta(**base, **values))
        rows += [
            StateDelta(**base, **delta_values(kind=DeltaKind.FACT, text=fact))
            for fact in change.learned
        ]
        if change.memory:
            significance = int(clamp(change.significance, 0, 3))
            Memory.objects.get_or_create(
                member=change.character,
                turn=turn,
                defaults={
                    "text": memory_text(change.memory),
                    "witnesses": sorted(witnesses),
                    "significance": significance,
                    "pinned": significance == 3,
                },
            )
    StateDelta.objects.bulk_create(rows)
    return [change.character.pk for change in allowed]


# The state on the head's branch.


@dataclass(frozen=True)
class _Step:
    """A production's delta as the fold reads it (its target is a cast member)."""

    kind: str
    target_id: object
    affinity: int
    trust: int
    mood: str
    intensity: float
    text: str


def member_state(*, member_id: object, branch_ids: Sequence[object]) -> CharacterValues:
    """A cast member's state after the turns `branch_ids` (root first): the fold of their
    deltas in the branch's order, edges keyed by the other member's assistant id."""
    order = {turn_id: index for index, turn_id in enumerate(branch_ids)}
    deltas = sorted(
        StateDelta.objects.filter(member_id=member_id, turn_id__in=branch_ids),
        key=lambda d: (order[d.turn_id], d.pk),
    )
    return fold(
        _Step(d.kind, d.toward_id, d.affinity, d.trust, d.mood, d.intensity, d.text) for d in deltas
    )


def member_memories(*, member_id: object, branch_ids: Sequence[object]) -> list[Memory]:
    """The candidates a prompt recalls from: the member's own memories of the branch's
    turns, every pin and the newest."""
    return list(
        Memory.objects.filter(member_id=member_id, turn_id__in=branch_ids).order_by(
            "-pinned", "-created_at", "-id"
        )[:MEMORY_CANDIDATES]
    )


def prompt_section(
    production: Production, member: Assistant, branch: Sequence[Turn], names: dict
) -> str:
    """The speaker's own state for its system prompt, after `branch`: only what it
    witnessed on this branch, the others by the names it knows them by ("" while nothing
    has happened to it)."""
    ids = [turn.pk for turn in branch]
    values = member_state(member_id=member.pk, branch_ids=ids)
    memories = member_memories(member_id=member.pk, branch_ids=ids)
    if not memories and values == fold(()):
        return ""
    known = {str(pk): name for pk, name in names.items()}
    seat = values.seat
    sections = {
        "memories": memory_lines(rank_memories(memories, k=MEMORIES_K)),
        "relationships": [
            edge_line(known[key], edge.affinity, edge.trust, edge.knowledge)
            for key, edge in values.edges.items()
            if key in known  # a member since removed from the cast
        ],
        "mood": mood_lines(seat.mood, seat.intensity, seat.facts),
    }
    titles = section_titles()
    name = public_name(member.persona)
    return "\n\n".join(
        titles[key].format(name=name) + "\n" + "\n".join(lines)
        for key, lines in sections.items()
        if lines
    )


def rewind_counts(turn_ids: Sequence[object]) -> dict[str, int]:
    """What a rewind hides of the cast's state with the turns `turn_ids`."""
    return {
        "state_deltas": StateDelta.objects.filter(turn_id__in=turn_ids).count(),
        "memories": Memory.objects.filter(turn_id__in=turn_ids).count(),
    }


API_MEMORIES = 50  # the newest a member's state answer lists


def production_state(*, production: Production) -> dict:
    """The cast's state at the production's head, for its owner: each member's mood (with
    its compiled parameters), learned facts, edges toward the others and newest memories,
    by the names everyone knows (the owner reads every side).

    Returns:
        The `ProductionStateSerializer` answer (productions/serializers.py).
    """
    cast = cast_load(production=production)
    ids = [turn.pk for turn in turn_branch(production=production, leaf_id=production.head_id)]
    labels = {str(member.pk): public_name(member.persona) for member in cast}
    members = []
    for member in cast:
        values = member_state(member_id=member.pk, branch_ids=ids)
        memories = Memory.objects.filter(member=member, turn_id__in=ids).order_by(
            "-created_at", "-id"
        )[:API_MEMORIES]
        seat = values.seat
        members.append(
            {
                "assistant": str(member.pk),
                "name": labels[str(member.pk)],
                "mood": {
                    "name": seat.mood,
                    "intensity": seat.intensity,
                    "parameters": compiled_parameters(mood=seat.mood, intensity=seat.intensity),
                },
                "facts": list(seat.facts),
                "edges": [
                    {
                        "target": key,
                        "name": labels[key],
                        "affinity": edge.affinity,
                        "trust": edge.trust,
                        "level": level(edge.affinity),
                        "knowledge": list(edge.knowledge),
                    }
                    for key, edge in sorted(values.edges.items())
                    if key in labels
                ],
                "memories": [
                    {
                        "id": str(m.pk),
                        "text": m.text,
                        "turn": str(m.turn_id),
                        "significance": m.significance,
                        "pinned": m.pinned,
                    }
                    for m in memories
                ],
            }
        )
    failed = (
        TurnStatePass.objects.filter(turn__production=production, status="failed")
        .order_by("-created_at")
        .first()
    )
    return {"members": members, "last_failure": failed.error if failed else None}
