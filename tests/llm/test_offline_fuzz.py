"""The offline narrator, fuzzed: whatever the world, scenario, names and history, a call
made as the app makes it (a production's turn, a soft analysis, bones, a flesh scene, an AI
seat's intention, each with the context its caller hands the narrator) gets an answer,
never an exception and never an empty one.

Unsaved model instances stand in for the database: the compilers read only their fields
(memberships are given as prefetched, empty or covert)."""

import itertools
import uuid
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from authoring.models import Affiliation, Membership, Persona, Scenario, World
from lmix.llm.base import CallConfig, Message, Usage
from lmix.llm.offline import Act, OfflineNarrator, Scene
from productions.models import Production, Turn
from productions.prompting import (
    CONTINUE_CUE,
    IMPERSONATE_CUE,
    NEXT_CUE,
    build_messages,
    offline_reply,
    speaker_names,
)
from synthesis.ai_seats import ai_prompt, ai_reply, intention_text, seat_names
from synthesis.medium.bones import Bones
from synthesis.models import Frame, Liquid, Outcome, Seat
from synthesis.soft import SoftAnalysis, SoftContext, names_known_to, soft_messages

CONFIG = CallConfig(provider="offline", endpoint="offline://narrator", model_id="narrator")
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
_ids = itertools.count(1)

# What breaks naive formatting and parsing: format fields, the narrator's own markers,
# cues, roles, empty-ish and very long text.
AWKWARD = [
    "",
    " ",
    "\n",
    "{world}",
    "{Name}",
    "{other}",
    "{",
    "}",
    "{}",
    "{0}",
    "%s",
    "YOU ARE:",
    "YOU ARE: ",
    "- Known to others as:",
    "WORLD:",
    "SCENARIO: x",
    "SCENE TO NARRATE:",
    "END OF SCENE",
    "- Words: 0",
    "- Character:",
    "[Director]",
    "[The scene begins. Speak first.]",
    CONTINUE_CUE,
    "Bob: ",
    ": :",
    '"',
    "“",
    "*",
    "The ",
    "Ünïcødé 名前 🐙",
    "\u200b",
    "x" * 5000,
    "word " * 800,
]
TEXT = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=80),
    st.lists(st.sampled_from(AWKWARD), min_size=1, max_size=4).map(" ".join),
)
# An intention is never blank: liquid_submit refuses one.
INTENTION = TEXT.filter(lambda text: text.split())
NAME = st.one_of(
    st.sampled_from(["Detective Johnson", "Ann", "Dr. Q", "Mr. Bob Wilson", "The Stranger"]),
    TEXT.map(lambda text: text[:200]),
)


def persona(name: str, known_as: str = "", covert_in: Affiliation | None = None) -> Persona:
    p = Persona(name=name, known_as=known_as, universal_truth="seen", internal_truth="hidden")
    p.pk = uuid.UUID(int=next(_ids))
    memberships = [Membership(affiliation=covert_in, covert=True)] if covert_in else []
    p._prefetched_objects_cache = {"memberships": memberships}
    return p


@st.composite
def settings_and_cast(draw):
    world = World(name=draw(NAME) or "W", description=draw(TEXT), lore_scan_depth=2)
    scenario = Scenario(name=draw(NAME) or "S", description=draw(TEXT))
    unit = Affiliation(name="Unit", internal_truth="unit secret")
    unit.pk = uuid.UUID(int=next(_ids))
    covert = draw(st.booleans())
    cast = [
        persona(draw(NAME), draw(st.one_of(st.just(""), NAME)), unit if covert else None)
        for _ in range(draw(st.integers(1, 3)))
    ]
    cast.append(persona(draw(NAME), covert_in=unit if draw(st.booleans()) else None))
    return world, scenario, cast


def answer_of(result: object, schema: type[BaseModel]) -> BaseModel:
    """A structured answer as a schema instance, whether the narrator returns the instance
    or its raw JSON text."""
    if isinstance(result, str | bytes):
        return schema.model_validate_json(result)
    return schema.model_validate(result.model_dump())


def complete_and_stream(messages: list[Message], context: object) -> str:
    narrator = OfflineNarrator()
    config = replace(CONFIG, context=context)
    text = narrator.complete(config, messages).text
    assert text.strip(), context
    streamed = "".join(narrator.stream(config, messages, Usage()))
    assert streamed == text
    return text


@FUZZ
@given(
    setting=settings_and_cast(),
    history=st.lists(st.tuples(st.sampled_from(["own", "other", "director"]), TEXT), max_size=6),
    cue=st.sampled_from([NEXT_CUE, CONTINUE_CUE, IMPERSONATE_CUE]),
)
def test_a_production_turn_is_always_answered(setting, history, cue):
    world, scenario, cast = setting
    speaker, other = cast[0], cast[-1]
    voices = {1: speaker, 2: other}
    branch = [
        Turn(
            speaker_kind="director" if who == "director" else "assistant",
            assistant_id={"own": 1, "other": 2}.get(who),
            speaker_name="Director" if who == "director" else f"label of {who}",
            content=text,
            status="done",
        )
        for who, text in history
    ]
    messages, _ = build_messages(
        speaker=speaker,
        speaker_assistant_id=1,
        cast=cast,
        world=world,
        scenario=scenario,
        branch=branch,
        model_id="narrator",
        cue=cue,
        voices=voices,
    )
    reply = offline_reply(
        speaker=speaker,
        speaker_assistant_id=1,
        world=world,
        scenario=scenario,
        branch=branch,
        names=speaker_names(voices=voices, reader=speaker),
        cue=cue,
    )
    complete_and_stream(messages, reply)


def frame_of(world: World, scenario: Scenario, cast: list[Persona]) -> tuple[Frame, list[Seat]]:
    frame = Frame(production=Production(world=world, scenario=scenario))
    seats = []
    for position, p in enumerate(cast):
        seat = Seat(frame=frame, persona=p, position=position, controller="ai")
        seat.pk = uuid.UUID(int=next(_ids))
        seats.append(seat)
    return frame, seats


@FUZZ
@given(setting=settings_and_cast(), content=TEXT)
def test_a_soft_analysis_is_always_valid(setting, content):
    frame, seats = frame_of(*setting)
    liquid = Liquid(frame=frame, seat=seats[0], content=content)
    messages = soft_messages(frame=frame, liquid=liquid, seats=seats)
    context = SoftContext(content, names_known_to(seats[0].pk, seats))
    config = replace(CONFIG, context=context)
    result = OfflineNarrator().structured(config, messages, SoftAnalysis, Usage())
    assert answer_of(result, SoftAnalysis).refined.strip()


@FUZZ
@given(setting=settings_and_cast(), actions=st.lists(INTENTION, min_size=1, max_size=4))
def test_bones_resolve_every_listed_action(setting, actions):
    world, scenario, cast = setting
    # The labels bones prompts give characters: one line each, no brackets (context.py).
    labels = [" ".join(p.name.split()).replace("]", ")") or "Someone" for p in cast]
    listed = tuple(
        _action(labels[number % len(labels)], text) for number, text in enumerate(actions)
    )
    config = replace(CONFIG, context=listed)
    result = OfflineNarrator().structured(config, [Message("user", "Resolve.")], Bones, Usage())
    bones = answer_of(result, Bones)
    assert len(bones.actions_resolved) == len(actions)


def _action(label: str, text: str):
    from synthesis.medium.context import Action, flat

    return Action(liquid_id=uuid.uuid4(), seat_id=uuid.uuid4(), label=label, text=flat(text))


@FUZZ
@given(
    name=NAME,
    acts=st.lists(st.tuples(NAME, TEXT, st.sampled_from(["", "success", "failure", "odd"]))),
    told=st.lists(TEXT, max_size=3),
    words=st.integers(-5, 2000),
)
def test_a_flesh_scene_is_always_narrated(name, acts, told, words):
    scene = Scene(
        character=name,
        intentions=tuple(Act(who, text) for who, text, _ in acts),
        interrupts=tuple(told[:1]),
        results=tuple(Act(who, text, result) for who, text, result in acts),
        facts=tuple(told),
        words=words,
    )
    complete_and_stream([Message("system", "Narrate."), Message("user", repr(scene))], scene)


@FUZZ
@given(setting=settings_and_cast(), said=st.lists(TEXT, max_size=3), aimed=TEXT)
def test_an_ai_seat_always_has_an_intention(setting, said, aimed):
    frame, seats = frame_of(*setting)
    seat = seats[0]
    recent = [
        Outcome(
            frame=frame,
            seq=n,
            actions_resolved=[{"seat": str(seats[-1].pk), "action": text, "result": "success"}],
            world_facts=[text],
        )
        for n, text in enumerate(said, 1)
    ]
    outcome = Outcome(frame=frame, seq=99, interrupts=[{"seat": str(seat.pk), "reason": aimed}])
    messages = ai_prompt(seat=seat, seats=seats, recent=recent, outcome=outcome)
    reply = ai_reply(seat=seat, seats=seats, recent=recent, outcome=outcome)
    text = complete_and_stream(messages, reply)
    assert intention_text(text, seat_names(seat)).strip()
