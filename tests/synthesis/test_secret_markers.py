"""Secrets stay where they belong, for generated tables: a marker is planted in every secret
(each character's internal truth, each group's internal truth, a real name behind a public
one) and a whole loop runs (submit, soft pass, commit, medium pass) for the seats that
act; some characters are played by assistants, which act when the GM advances the scene.
Every model answer repeats each marker its prompt holds (the narratives, and what the AI
seats intend: a model that read its character's secrets and says them). No marker reaches
a soft or medium prompt, a socket event or a REST answer (exports and character sheets
too) of anyone the rules of DESIGN.md §3 keep it from — the AI seats' slips are held for
the GM (docs/synthesis.md, "The secret guard"): they are written here independently of the
code."""

import json
import re
import uuid
from dataclasses import dataclass
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authoring.models import Membership
from lmix.llm.base import CallConfig, Completion, Message, Usage
from lmix.llm.offline import OfflineNarrator
from lmix.models import LLMModel
from lmix.realtime import publish
from productions.services import production_create
from synthesis import medium
from synthesis.ai_seats import ai_act_run, frame_advance
from synthesis.frame_events import frame_group, gm_group, seat_group, spectator_group
from synthesis.frames import frame_create, frame_join
from synthesis.liquid import liquid_commit, liquid_submit
from synthesis.models import Liquid, Pass
from synthesis.soft import soft_pass_run
from tests.conftest import logged_in_client
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    PersonaFactory,
    ScenarioFactory,
    UserFactory,
    WorldFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class Table:
    groups: int
    memberships: tuple[tuple[tuple[int, bool], ...], ...]  # per character: (group, covert)
    aliases: tuple[bool, ...]  # per character: a public name (known_as) over the real one
    ai: tuple[bool, ...]  # per character: played by its assistant (never all of them)
    visibility: str
    mode: str
    acting: tuple[int, ...]  # the characters that act, in order


@st.composite
def tables(draw) -> Table:
    groups = draw(st.integers(0, 3))
    size = draw(st.integers(2, 4))
    memberships = tuple(
        tuple(
            (g, draw(st.booleans()))
            for g in (draw(st.lists(st.integers(0, groups - 1), unique=True)) if groups else [])
        )
        for _ in range(size)
    )
    ai = tuple(draw(st.booleans()) for _ in range(size))
    ai = ai if not all(ai) else (False, *ai[1:])
    acting = tuple(draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=3)))
    if all(ai[i] for i in acting):  # a person acts at least once: there is an outcome
        acting += (ai.index(False),)
    return Table(
        groups=groups,
        memberships=memberships,
        aliases=tuple(draw(st.booleans()) for _ in range(size)),
        ai=ai,
        visibility=draw(st.sampled_from(["all", "own", "gm"])),
        mode=draw(st.sampled_from(["per_character", "shared"])),
        acting=acting,
    )


def forbidden(table: Table, speaker: int, tag: str) -> set[str]:
    """The markers character `speaker` may not know (DESIGN.md §3): others' internal
    truths, the internal truths of groups it is not in, and a real name behind a public
    one unless it shares a covert group with that character."""
    mine = {g for g, _ in table.memberships[speaker]}
    markers = set()
    for other, joined in enumerate(table.memberships):
        if other == speaker:
            continue
        markers.add(f"P{other}-INTERNAL-{tag}")
        fellow = any(covert and g in mine for g, covert in joined)
        if table.aliases[other] and not fellow:
            markers.add(f"P{other}-NAME-{tag}")
    markers |= {f"G{g}-INTERNAL-{tag}" for g in range(table.groups) if g not in mine}
    return markers


def found(markers: set[str], where: object) -> set[str]:
    text = where if isinstance(where, str) else json.dumps(where, default=str)
    return {m for m in markers if m in text}


def build(table: Table, tag: str):
    """The table in the database: a GM, one player per character a person plays (None for
    the assistants' seats)."""
    gm = UserFactory()
    model = LLMModel.objects.get(owner=gm, provider="offline")
    groups = [
        AffiliationFactory(owner=gm, name=f"G{g}-NAME-{tag}", internal_truth=f"G{g}-INTERNAL-{tag}")
        for g in range(table.groups)
    ]
    assistants = []
    for index, joined in enumerate(table.memberships):
        persona = PersonaFactory(
            owner=gm,
            name=f"P{index}-NAME-{tag}",
            known_as=f"P{index}-ALIAS-{tag}" if table.aliases[index] else "",
            internal_truth=f"P{index}-INTERNAL-{tag}",
        )
        for g, covert in joined:
            Membership.objects.create(persona=persona, affiliation=groups[g], covert=covert)
        assistants.append(AssistantFactory(owner=gm, persona=persona, model=model))
    production = production_create(
        owner=gm,
        name="Markers",
        world=WorldFactory(owner=gm),
        scenario=ScenarioFactory(owner=gm),
        assistants=assistants,
    )
    frame = frame_create(
        production=production,
        name="Markers",
        mode=table.mode,
        tempo=0,  # a commit fires its window at once
        liquid_visibility=table.visibility,
        open_seats=[a.persona_id for a, ai in zip(assistants, table.ai, strict=True) if not ai],
    )
    seats = list(frame.seats.order_by("position"))
    players = []
    for seat, ai in zip(seats, table.ai, strict=True):
        player = None if ai else UserFactory()
        if player is not None:
            frame_join(user=player, invite_code=frame.invite_code, seat_id=seat.pk)
        players.append(player)
    return frame, list(frame.seats.order_by("position")), players


SECRET = re.compile(r"\b[PG]\d+-(?:INTERNAL|NAME)-[0-9a-f]{8}\b")


def parrot(self, config: CallConfig, messages: list[Message]) -> Completion:
    """The offline narrator's prose, replaced by every secret marker its prompt holds (inner
    truths first; a handful of words, within any word budget): a narrative that tells all
    its character knows, so one sent to the wrong socket or answer shows."""
    markers = dict.fromkeys(SECRET.findall("\n".join(m.content for m in messages)))
    text = " ".join(sorted(markers, key=lambda m: "-INTERNAL-" not in m)) or "Nothing."
    return Completion(text, Usage(prompt_tokens=1, completion_tokens=len(markers) or 1))


def play(frame, seats, players, acting: tuple[int, ...]) -> None:
    """Each acting character submits, its soft pass runs, it commits, and every medium pass
    that wakes runs, here and in order (the tasks are caught instead of enqueued); an
    acting character an assistant plays acts when the GM advances the scene (every AI seat
    that may act does)."""
    with (
        mock.patch("synthesis.tasks.soft_pass_task.delay") as soft,
        mock.patch("synthesis.tasks.medium_pass_task.delay") as medium_delay,
        mock.patch("synthesis.tasks.ai_act_task.delay") as ai_delay,
        mock.patch("synthesis.tasks.flesh_task.delay"),  # narrated here, below
        mock.patch.object(OfflineNarrator, "complete", parrot),
    ):
        for turn, index in enumerate(acting):
            if players[index] is None:
                frame_advance(frame=frame)
            else:
                liquid = liquid_submit(
                    frame=frame,
                    seat=seats[index],
                    content=f"Turn {turn}: I open the shutters and look down into the street.",
                    user=players[index],
                )
                for call in soft.call_args_list:
                    soft_pass_run(pass_id=call.args[0])
                soft.reset_mock()
                liquid.refresh_from_db()
                liquid_commit(liquid=liquid, user=players[index])
            for call in ai_delay.call_args_list:
                ai_act_run(act_id=call.args[0])
            ai_delay.reset_mock()
            for call in soft.call_args_list:
                soft_pass_run(pass_id=call.args[0])
            soft.reset_mock()
            while medium_delay.call_args_list:
                calls = list(medium_delay.call_args_list)
                medium_delay.reset_mock()
                for call in calls:
                    medium.medium_pass_run(pass_id=call.args[0])
                    medium.medium_flesh_run(pass_id=call.args[0])


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(table=tables())
def test_no_marker_reaches_a_prompt_event_or_answer_of_anyone_who_may_not_know_it(table):
    tag = uuid.uuid4().hex[:8]
    published: list[tuple[str, dict]] = []
    with mock.patch.object(
        publish, "_put", lambda group, message: published.append((group, message))
    ):
        frame, seats, players = build(table, tag)
        play(frame, seats, players, table.acting)

    everyone = set().union(*(forbidden(table, i, tag) for i in range(len(seats))))
    position = {seat.pk: i for i, seat in enumerate(seats)}
    passes = list(Pass.objects.filter(frame=frame))
    assert {p.status for p in passes} == {"done"}
    assert {p.kind for p in passes} == {"soft", "medium"}
    for pass_ in passes:
        for entry in pass_.messages:
            # What an outcome or a shared narrative rests on is read by everyone; a soft
            # pass weighs the character's own intention with what it knows.
            shared = entry["step"] == "bones" or (table.mode == "shared" and pass_.kind == "medium")
            mine = forbidden(table, position[pass_.seat_id], tag)
            assert not found(everyone if shared else mine, entry["messages"]), entry["step"]

    # The control: markers do travel where they may, or the checks above prove nothing.
    if table.mode == "per_character":
        flesh = [
            e for p in passes for e in p.messages if e["step"] == "flesh" and p.kind == "medium"
        ]
        actor = position[next(p.seat_id for p in passes if p.kind == "medium")]
        assert any(f"P{actor}-INTERNAL-{tag}" in json.dumps(e) for e in flesh)

    kinds = {message["payload"]["type"] for _, message in published if "payload" in message}
    assert {"outcome.created", "narrative.done"} <= kinds
    if table.mode == "per_character":  # the actor's narrative told its own inner truth
        own = seat_group(frame.pk, seats[actor].pk)
        assert any(f"P{actor}-INTERNAL-{tag}" in json.dumps(m) for g, m in published if g == own)
    for group, message in published:
        if group in (frame_group(frame.pk), spectator_group(frame.pk)):
            assert not found(everyone, message), (group, message.get("payload", {}).get("type"))
        for index, seat in enumerate(seats):
            if group == seat_group(frame.pk, seat.pk):
                assert not found(forbidden(table, index, tag), message), group

    # The control for the assistants: each that acted said its secret, which the GM reads,
    # held, and no one else (above).
    for liquid in Liquid.objects.filter(frame=frame, author__isnull=True):
        index = position[liquid.seat_id]
        assert liquid.held and f"P{index}-INTERNAL-{tag}" in liquid.content
        gm = gm_group(frame.pk)
        assert any(liquid.content in json.dumps(m) for g, m in published if g == gm)

    exports = [f"/api/frames/{frame.pk}/export?format={kind}" for kind in ("json", "md")]
    for index, player in enumerate(players):
        if player is None:  # an assistant's seat: nobody reads it
            continue
        client = logged_in_client(player)
        for url in (f"/api/frames/{frame.pk}", "/api/frames", *exports):
            answer = client.get(url)
            assert answer.status_code == 200
            assert not found(forbidden(table, index, tag), answer.content.decode()), url
            if url in exports and table.mode == "per_character" and index == actor:
                # The control: the actor's story, which tells its own inner truth, is there.
                assert f"P{actor}-INTERNAL-{tag}" in answer.content.decode(), url
        # The character sheet: all of its own, nothing of what it may not know.
        sheet = client.get(f"/api/frames/{frame.pk}/seats/{seats[index].pk}/sheet")
        assert sheet.status_code == 200
        assert not found(forbidden(table, index, tag), sheet.json())
        assert f"P{index}-INTERNAL-{tag}" in json.dumps(sheet.json())
