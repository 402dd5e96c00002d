"""Character state (synthesis/state/): the fold of deltas is the state, clamps included; a
character never remembers what it did not witness, and its prompt never holds another's
memories; the state pass runs after an outcome (the offline narrator answers it), fails
visibly on answers that will not validate, and stays out of public prompts; the state API
is the seat's player's and the GM's only."""

import random
import uuid
from unittest import mock

import pytest
from django import conf
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmix.llm.meter import meter_read
from lmix.models import LLMCall, LLMModel
from synthesis import medium
from synthesis.budget import frame_key
from synthesis.medium import run as run_module
from synthesis.medium.components import FLESH, FLESH_SHARED, PassKind
from synthesis.models import Outcome
from synthesis.state.fold import DELTA_MAX, fold
from synthesis.state.levels import level
from synthesis.state.run import state_pass_run
from synthesis.state.schema import CharacterChange, EdgeChange, StateProposal
from synthesis.state.services import delta_record, state_apply
from synthesis.state_models import (
    DeltaKind,
    Edge,
    Memory,
    SeatState,
    SignificancePass,
    StateDelta,
    StatePass,
)
from tests.conftest import logged_in_client
from tests.round_trips import round_trips
from tests.synthesis.conftest import Scene, run, sent
from tests.synthesis.test_medium import fake_model

pytestmark = pytest.mark.django_db(transaction=True)
MODEL = LLMModel(model_id="gpt-4o")  # a 128k window: nothing is trimmed
MOODS = ["neutral", "happy", "sad", "angry", "anxious", "shy"]


@pytest.fixture(autouse=True)
def state_passes_on(settings):
    settings.LMIX_STATE_PASSES = True


# -- the fold ------------------------------------------------------------------------------

# One update: ("edge", target, affinity, trust, fact) | ("mood", name, change) | ("fact", text)
updates = st.lists(
    st.one_of(
        st.tuples(
            st.just("edge"),
            st.sampled_from(["b", "c"]),
            st.integers(-60, 60),
            st.integers(-60, 60),
            st.sampled_from(["", "f1", "f2", "f3"]),
        ),
        st.tuples(st.just("mood"), st.sampled_from(["", *MOODS, "bogus"]), st.floats(-2, 2)),
        st.tuples(st.just("fact"), st.sampled_from(["", "x", "y", "z"])),
    ),
    max_size=40,
)


def reference(ops: list[tuple]) -> tuple[dict, tuple]:  # noqa: C901
    """The state written independently: each update clamped to its bounds as it comes."""
    edges: dict[str, list] = {}
    mood, intensity, facts = "neutral", 0.5, []
    for op in ops:
        if op[0] == "edge":
            _, target, affinity, trust, fact = op
            a, t, known = edges.get(target, [10, 50, []])
            a = min(100, max(0, a + min(DELTA_MAX, max(-DELTA_MAX, affinity))))
            t = min(100, max(0, t + min(DELTA_MAX, max(-DELTA_MAX, trust))))
            if fact and fact not in known:
                known = [*known, fact]
            edges[target] = [a, t, known]
        elif op[0] == "mood":
            _, name, change = op
            mood = name if name in MOODS else mood
            intensity = min(1.0, max(0.0, intensity + min(1.0, max(-1.0, round(change, 4)))))
        elif op[1] and op[1] not in facts:
            facts = [*facts, op[1]]
    edges_seen = {k: (a, t, tuple(known)) for k, (a, t, known) in edges.items()}
    return edges_seen, (mood, intensity, facts)


class Row:
    """A delta as stored: its numbers clamped as `delta_record` clamps them."""

    def __init__(self, op: tuple) -> None:
        self.kind, self.target_id, self.affinity, self.trust = op[0], None, 0, 0
        self.mood, self.intensity, self.text = "", 0.0, ""
        if op[0] == "edge":
            self.target_id = op[1]
            self.affinity = min(DELTA_MAX, max(-DELTA_MAX, op[2]))
            self.trust = min(DELTA_MAX, max(-DELTA_MAX, op[3]))
            self.text = op[4]
        elif op[0] == "mood":
            self.mood, self.intensity = op[1], min(1.0, max(-1.0, round(op[2], 4)))
        else:
            self.text = op[1]


@given(updates)
def test_folding_the_deltas_gives_the_state_that_applying_each_update_gives(ops):
    folded = fold(Row(op) for op in ops)
    edges, (mood, intensity, facts) = reference(ops)
    assert {k: (v.affinity, v.trust, v.knowledge) for k, v in folded.edges.items()} == edges
    assert folded.seat.mood == mood and list(folded.seat.facts) == facts
    assert folded.seat.intensity == pytest.approx(intensity, abs=1e-3)
    assert 0.0 <= folded.seat.intensity <= 1.0
    assert all(0 <= v.affinity <= 100 and 0 <= v.trust <= 100 for v in folded.edges.values())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stored_caches_are_the_fold_of_the_stored_deltas(user, seed):
    """Through the database: `delta_record` moves the caches as it stores each delta;
    folding the rows read back gives the same values, clamps included."""
    scene = Scene(user)
    dice = random.Random(seed)
    ops = []
    for _ in range(60):
        kind = dice.choice(["edge", "edge", "mood", "fact"])
        if kind == "edge":
            ops.append(
                ("edge", dice.choice(["bob", "tony"]), dice.randint(-40, 40), dice.randint(-40, 40),
                 dice.choice(["", "owes money", "lies"]))
            )  # fmt: skip
        elif kind == "mood":
            ops.append(("mood", dice.choice([*MOODS, ""]), dice.uniform(-0.8, 0.8)))
        else:
            ops.append(("fact", dice.choice(["the door is locked", "it rains"])))
    seats = {"bob": scene.bob, "tony": scene.tony}
    for op in ops:
        if op[0] == "edge":
            delta_record(
                seat=scene.alice, kind=DeltaKind.EDGE, target=seats[op[1]],
                affinity=op[2], trust=op[3], text=op[4],
            )  # fmt: skip
        elif op[0] == "mood":
            delta_record(seat=scene.alice, kind=DeltaKind.MOOD, mood=op[1], intensity=op[2])
        else:
            delta_record(seat=scene.alice, kind=DeltaKind.FACT, text=op[1])
    folded = fold(StateDelta.objects.filter(seat=scene.alice).order_by("id"))
    for edge in Edge.objects.filter(source=scene.alice):
        values = folded.edges[str(edge.target_id)]
        assert (edge.affinity, edge.trust, tuple(edge.knowledge)) == (
            values.affinity, values.trust, values.knowledge,
        )  # fmt: skip
    state = SeatState.objects.get(seat=scene.alice)
    assert (state.mood, state.intensity, tuple(state.facts)) == (
        folded.seat.mood, pytest.approx(folded.seat.intensity), folded.seat.facts,
    )  # fmt: skip
    expected, _ = reference([(op[0], str(seats[op[1]].pk), *op[2:]) if op[0] == "edge" else op
                             for op in ops])  # fmt: skip
    assert {k: (v.affinity, v.trust, v.knowledge) for k, v in folded.edges.items()} == expected


def test_levels_follow_the_seed():
    assert [level(a) for a in (0, 20, 21, 40, 41, 60, 61, 80, 81, 100)] == [
        "stranger", "stranger", "acquaintance", "acquaintance", "friend", "friend",
        "close friend", "close friend", "soulmate", "soulmate",
    ]  # fmt: skip


# -- witnesses ----------------------------------------------------------------------------


def outcome_for(scene: Scene, witnesses: list, text: str = "opens the door") -> Outcome:
    seq = (Outcome.objects.filter(frame=scene.frame).order_by("-seq").first() or Outcome(seq=0)).seq
    outcome = Outcome.objects.create(
        frame=scene.frame,
        seq=seq + 1,
        seat=scene.alice,
        actions_resolved=[{"seat": str(scene.alice.pk), "action": text, "result": "success"}],
        witnesses=[str(s.pk) for s in witnesses],
    )
    if conf.settings.LMIX_STATE_PASSES:  # its pass pending, as bones leave it; run by the test
        StatePass.objects.create(outcome=outcome, frame=scene.frame)
    return outcome


def weighed(outcome: Outcome) -> Outcome:
    """`outcome` with its significance pass pending, as its state pass leaves it."""
    SignificancePass.objects.create(outcome=outcome, frame=outcome.frame)
    return outcome


def flesh_prompt(scene: Scene, seat) -> str:
    """The flesh prompt of a pass of `seat`, as its narrative would be sent."""
    pass_ = scene.fire(seat, scene.commit(seat, "I look around."))
    ctx = medium.gather(pass_, flesh=True)
    return "\n".join(m.content for m in medium.compile_flesh(ctx, None, MODEL))


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seen=st.lists(st.booleans(), min_size=3, max_size=3), extra=st.booleans())
def test_nobody_remembers_what_it_did_not_witness_nor_reads_anothers_memories(user, seen, extra):
    """Whatever the model proposes (a memory for every character, even unknown names), only
    the outcome's witnesses remember it; and each character's prompt holds its own memory
    markers only."""
    scene = Scene(user)
    seats = [scene.alice, scene.bob, scene.tony]
    witnesses = [s for s, saw in zip(seats, seen, strict=True) if saw]
    outcome = outcome_for(scene, witnesses)
    labels = medium.gather(scene.fire(scene.alice, scene.commit(scene.alice, "I wait."))).labels
    markers = {s.pk: f"MEMORY-MARKER-{uuid.uuid4().hex[:8]}" for s in seats}
    proposal = StateProposal(
        characters=[
            CharacterChange(
                character=labels[s.pk],
                memory=f"{markers[s.pk]} I saw the door open.",
                relationships=[EdgeChange(toward=labels[o.pk], affinity=5) for o in seats],
                learned=[f"FACT-{markers[s.pk]}"],
            )
            for s in seats
        ]
        + ([CharacterChange(character="Nobody Here", memory="GHOST-MARKER")] if extra else [])
    )
    changed = state_apply(outcome=outcome, proposal=proposal, seats=seats, labels=labels)
    assert set(changed) == {s.pk for s in witnesses}
    for seat in seats:
        memories = list(Memory.objects.filter(seat=seat))
        if seat in witnesses:
            assert [m.text.split()[0] for m in memories] == [markers[seat.pk]]
        else:
            assert memories == []
            assert not StateDelta.objects.filter(seat=seat).exists()
    assert not Memory.objects.filter(text__contains="GHOST-MARKER").exists()
    for seat in seats:
        prompt = flesh_prompt(scene, seat)
        for other, marker in markers.items():
            assert (marker in prompt) == (other == seat.pk and seat in witnesses)


def test_a_memory_is_never_recorded_for_a_seat_outside_the_witnesses(user):
    from synthesis.state.services import memory_record

    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice])
    assert memory_record(seat=scene.bob, outcome=outcome, text="BOB-SAW-IT") is None
    assert memory_record(seat=scene.alice, outcome=outcome, text="ALICE-SAW-IT") is not None
    assert memory_record(seat=scene.alice, outcome=outcome, text="AGAIN") is None  # once
    assert list(Memory.objects.values_list("text", flat=True)) == ["ALICE-SAW-IT"]


def test_significance_three_pins_and_the_pins_are_capped(user):
    from synthesis.state.services import PINS_MAX, memory_record

    scene = Scene(user)
    for n in range(PINS_MAX + 3):
        memory_record(
            seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text=f"pin {n}",
            significance=7,  # clamped to 3
        )  # fmt: skip
    pinned = Memory.objects.filter(seat=scene.alice, pinned=True)
    assert pinned.count() == PINS_MAX
    assert set(Memory.objects.values_list("significance", flat=True)) == {3}
    assert not pinned.filter(text__in=["pin 0", "pin 1", "pin 2"]).exists()


# -- the state pass -----------------------------------------------------------------------


def test_after_an_outcome_its_state_pass_runs_through_its_task_with_the_offline_narrator(user):
    scene = Scene(user)
    from synthesis import tasks

    with mock.patch.object(
        tasks.state_pass_task, "delay", side_effect=lambda oid: tasks.state_pass_task(oid)
    ):
        first = run(scene.fire(scene.alice, scene.commit(scene.alice, "I open the blinds.")))
    outcome = Outcome.objects.get(source_pass=first)
    state_pass = StatePass.objects.get(outcome=outcome)
    assert state_pass.status == "done", state_pass.error
    witnesses = set(outcome.witnesses)
    remembered = set(Memory.objects.values_list("seat_id", flat=True))
    assert remembered and {str(s) for s in remembered} <= witnesses
    assert "open" in Memory.objects.get(seat=scene.alice).text
    alice_state = SeatState.objects.get(seat=scene.alice)
    assert alice_state.mood == "happy" and alice_state.intensity == pytest.approx(0.6)
    # The witnesses who saw Alice succeed like her a little more.
    bob_to_alice = Edge.objects.get(source=scene.bob, target=scene.alice)
    assert (bob_to_alice.affinity, bob_to_alice.trust) == (12, 51)
    assert StateDelta.objects.filter(outcome=outcome).count() > 0
    call = LLMCall.objects.get(purpose="synthesis.state")
    assert call.subject == f"outcome:{outcome.pk}"
    assert meter_read(frame_key(scene.frame.pk)).calls >= 3  # bones, flesh and state

    # The same task again does nothing: one state pass per outcome.
    assert state_pass_run(outcome_id=outcome.pk) is None
    assert LLMCall.objects.filter(purpose="synthesis.state").count() == 1

    # Alice's next narrative knows her memory, her relationships and her mood.
    second = run(scene.fire(scene.alice, scene.commit(scene.alice, "I sit.", after=5)))
    prompt = sent(second, "flesh")
    assert "YOUR MEMORIES" in prompt and "open the blinds" in prompt
    assert "YOUR RELATIONSHIPS" in prompt and "YOUR MOOD" in prompt and "happy" in prompt


def test_the_state_pass_prompt_and_its_results_hold_no_ones_secrets(user):
    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice, scene.bob, scene.tony])
    state_pass = state_pass_run(outcome_id=outcome.pk)
    assert state_pass.status == "done"
    stored = [
        str(state_pass.messages),
        *Memory.objects.values_list("text", flat=True),
        *StateDelta.objects.values_list("text", flat=True),
        *(str(k) for k in Edge.objects.values_list("knowledge", flat=True)),
    ]
    assert "opens the door" in stored[0]
    assert not any("SECRET-MARKER" in text for text in stored)


def test_an_answer_that_will_not_validate_is_sent_back_once_then_the_pass_fails(user, server):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    outcome = outcome_for(scene, [scene.alice, scene.bob])
    server.queue(data={"nope": 1})
    server.queue(data={"characters": "not a list"})
    state_pass = state_pass_run(outcome_id=outcome.pk)
    assert state_pass.status == "failed" and state_pass.error
    assert len(state_pass.tries) == 2
    assert not Memory.objects.exists() and not StateDelta.objects.exists()
    gm = (
        logged_in_client(user)
        .get(f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/state")
        .json()
    )
    assert gm["last_failure"] == state_pass.error


def test_an_answer_repaired_on_its_retry_is_applied(user, server):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    outcome = outcome_for(scene, [scene.alice, scene.bob])
    server.queue(data={"nope": 1})
    server.queue(
        data={"characters": [{"character": "Bob Wilson", "memory": "Alice opened the door.",
                              "relationships": [{"toward": "Alice Thompson", "affinity": 99}]}]}
    )  # fmt: skip
    state_pass = state_pass_run(outcome_id=outcome.pk)
    assert state_pass.status == "done", state_pass.error
    assert Memory.objects.get().seat_id == scene.bob.pk
    assert Edge.objects.get(source=scene.bob).affinity == 10 + DELTA_MAX  # clamped


def test_state_passes_stay_off_when_the_setting_says_so(user, settings):
    settings.LMIX_STATE_PASSES = False
    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice])
    assert not StatePass.objects.exists()  # no job made
    StatePass.objects.create(outcome=outcome, frame=scene.frame)  # one from before it was off
    assert state_pass_run(outcome_id=outcome.pk) is None
    assert StatePass.objects.get().status == "pending"


# -- prompts ------------------------------------------------------------------------------


def test_a_shared_frame_prompt_holds_no_private_state_section(user):
    assert not {"memories", "relationships", "mood"} & set(FLESH_SHARED.components)
    assert {"memories", "relationships", "mood"} <= set(FLESH.components)
    scene = Scene(user, mode="shared")
    outcome = outcome_for(scene, [scene.alice])
    assert state_pass_run(outcome_id=outcome.pk).status == "done"
    assert Memory.objects.filter(seat=scene.alice).exists()
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I wave."))
    ctx = medium.gather(pass_, flesh=True)
    assert not {"memories", "relationships", "mood"} & ctx.loaded.keys()  # not even read
    prompt = "\n".join(m.content for m in medium.compile_flesh(ctx, None, MODEL))
    assert "THE STORY SO FAR" in prompt
    for title in ("YOUR MEMORIES", "YOUR RELATIONSHIPS", "YOUR MOOD"):
        assert title not in prompt


def test_a_public_pass_kind_refuses_a_private_component(user):
    scene = Scene(user)
    ctx = medium.gather(scene.fire(scene.alice, scene.commit(scene.alice, "I wait.")))
    leaky = PassKind("leaky", "flesh_shared.txt", ("story", "memories"), (), public=True)
    with pytest.raises(ValueError, match="public"):
        leaky.parts(ctx, None)


def test_the_memories_section_is_bounded(user):
    from synthesis.state.components import MEMORIES_K
    from synthesis.state.services import memory_record

    scene = Scene(user)
    for n in range(MEMORIES_K + 6):
        memory_record(
            seat=scene.alice, outcome=outcome_for(scene, [scene.alice]),
            text=f"MEM-{n:02d} " + "long " * 400, significance=n % 3,
        )  # fmt: skip
    prompt = flesh_prompt(scene, scene.alice)
    shown = [n for n in range(MEMORIES_K + 6) if f"MEM-{n:02d}" in prompt]
    assert len(shown) == MEMORIES_K
    assert MEMORIES_K + 5 in shown  # the newest is recalled


# -- the API ------------------------------------------------------------------------------


def test_a_seats_state_is_its_players_and_the_gms_only(user):
    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice, scene.bob])
    state_pass_run(outcome_id=outcome.pk)
    url = f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/state"
    own = logged_in_client(scene.alice_player).get(url)
    assert own.status_code == 200
    body = own.json()
    assert body["seat"] == str(scene.alice.pk) and "last_failure" not in body
    assert [m["source"] for m in body["memories"]] == ["witnessed"]
    assert body["mood"]["name"] == "happy"
    assert {e["name"] for e in body["edges"]} <= {"Bob Wilson", "Tony Rosetti"}
    assert logged_in_client(scene.bob_player).get(url).status_code == 404
    gm = logged_in_client(user).get(url)
    assert gm.status_code == 200 and gm.json()["last_failure"] is None
    missing = f"/api/frames/{scene.frame.pk}/seats/{uuid.uuid4()}/state"
    assert logged_in_client(user).get(missing).status_code == 404


def test_the_state_adds_one_read_per_component_to_the_flesh_gather_only(user):
    """Whatever the cast, the flesh gather reads relationships and mood in two statements
    (one per component), the flesh prompt recalls memories in one more, and the bones
    gather, on the way from a commit to its outcome, reads none."""
    scene = Scene(user)
    state_pass_run(outcome_id=outcome_for(scene, [scene.alice, scene.bob, scene.tony]).pk)
    for other in (scene.bob, scene.tony):
        delta_record(seat=scene.alice, kind=DeltaKind.EDGE, target=other, affinity=3)
    pass_ = run_module.medium_pass_read(
        scene.fire(scene.alice, scene.commit(scene.alice, "I wait.")).pk
    )
    with CaptureQueriesContext(connection) as bones:
        medium.gather(pass_, frame=pass_.frame)
    with CaptureQueriesContext(connection) as flesh:
        ctx = medium.gather(pass_, frame=pass_.frame, flesh=True)
    assert len(flesh) == len(bones) + 2
    assert not any("synthesis_memory" in q["sql"] for q in [*bones, *flesh])
    assert [len(ctx.loaded[k]) for k in ("relationships", "mood")] == [2, 1]
    with CaptureQueriesContext(connection) as recalled:
        medium.compile_flesh(ctx, None, MODEL)
    assert len(recalled) == 1 and "synthesis_memory" in recalled[0]["sql"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a pipeline is PostgreSQL's")
def test_on_postgresql_the_flesh_gather_reads_the_state_in_its_one_round_trip(user):
    scene = Scene(user)
    state_pass_run(outcome_id=outcome_for(scene, [scene.alice, scene.bob]).pk)
    pass_ = run_module.medium_pass_read(
        scene.fire(scene.alice, scene.commit(scene.alice, "I wait.")).pk
    )
    with round_trips() as trips:
        ctx = medium.gather(pass_, frame=pass_.frame, flesh=True)
    assert trips == [1]
    assert "relationships" in ctx.loaded and ctx.loaded["mood"]


def test_the_state_up_to_an_outcome_folds_only_the_deltas_before_it(user):
    """Rewinding will be a filter: the state at outcome n folds the deltas up to it."""
    from synthesis.state.selectors import state_at

    scene = Scene(user)
    first, second = outcome_for(scene, [scene.alice]), outcome_for(scene, [scene.alice])
    for outcome, affinity in ((first, 10), (second, 20)):
        delta_record(
            seat=scene.alice, kind=DeltaKind.EDGE, target=scene.bob, outcome=outcome,
            affinity=affinity,
        )  # fmt: skip
    delta_record(seat=scene.alice, kind=DeltaKind.FACT, text="told by the GM", by=user)
    bob = str(scene.bob.pk)
    assert state_at(seat=scene.alice).edges[bob].affinity == 40
    assert state_at(seat=scene.alice).seat.facts == ("told by the GM",)
    before = state_at(seat=scene.alice, upto_seq=first.seq)
    assert before.edges[bob].affinity == 20 and before.seat.facts == ()
    assert Edge.objects.get(source=scene.alice).affinity == 40  # nothing was deleted


def test_a_models_loose_numbers_and_moods_are_read_not_refused():
    proposal = StateProposal.model_validate(
        {"characters": [
            {"character": "A", "mood": " Happy ", "significance": "2",
             "relationships": [{"toward": "B", "affinity": 2.6, "trust": "-3"}]},
            {"character": "B", "mood": "ecstatic"},
        ]}
    )  # fmt: skip
    a, b = proposal.characters
    assert (a.mood, a.significance, a.relationships[0].affinity, a.relationships[0].trust) == (
        "happy", 2, 3, -3,
    )  # fmt: skip
    assert b.mood is None  # a mood we have no name for leaves the mood as it was


def test_a_state_pass_whose_worker_died_runs_again_after_the_sweep_and_only_then(user):
    from datetime import timedelta

    from django.utils import timezone

    from lmix.realtime.leases import lease_sweep
    from synthesis.state.run import STATE

    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice, scene.bob])
    # Claimed by a worker that died at once: running under a lease nobody renews.
    StatePass.objects.filter(pk=outcome.pk).update(
        status="running", lease_owner="dead:1:x", heartbeat_at=timezone.now(), attempts=1
    )
    assert state_pass_run(outcome_id=outcome.pk) is None  # a redelivery: someone runs it
    assert lease_sweep(STATE, lapsed_after=60)["restarted"] == 0  # its lease holds yet
    StatePass.objects.filter(pk=outcome.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=61)
    )
    assert lease_sweep(STATE, lapsed_after=60)["restarted"] == 1
    again = state_pass_run(outcome_id=outcome.pk)
    assert (again.status, again.attempts) == ("done", 2)
    assert Memory.objects.filter(outcome=outcome).count() == 2
    assert state_pass_run(outcome_id=outcome.pk) is None  # done: never again


# -- recall -------------------------------------------------------------------------------


def test_a_relevant_older_memory_outranks_an_irrelevant_newer_one(user):
    """Recall ranks by the scene's words (PostgreSQL full-text search, SQLite FTS5), then
    significance and recency; in one statement, whatever the number of memories."""
    from synthesis.state.selectors import recall
    from synthesis.state.services import memory_record

    scene = Scene(user)
    remember = lambda text: memory_record(  # noqa: E731
        seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text=text
    )
    old = remember("The lighthouse keeper hid the brass key under the stairs.")
    for n in range(5):
        remember(f"Rain fell on the market square, day {n}.")
    newest = remember("We ate bread and cheese by the fire.")
    with CaptureQueriesContext(connection) as queries:
        about_key = recall(seat_id=scene.alice.pk, scene=["I search the stairs for the key"], k=2)
    assert len(queries) == 1
    assert about_key[-1].pk == old.pk  # the most important comes last
    about_nothing = recall(seat_id=scene.alice.pk, scene=["I whistle."], k=1)
    assert [m.pk for m in about_nothing] == [newest.pk]
    # stemming: "keys" and "hiding" still find it; nothing of a query's syntax gets through
    assert recall(seat_id=scene.alice.pk, scene=['keys" OR hiding * ) ('], k=1)[0].pk == old.pk


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 triggers")
def test_the_search_triggers_a_table_copy_dropped_come_back_after_migrate(user):
    """SQLite alters a table by copying it, which drops its triggers (a later migration of
    `Memory` did): after `migrate` they are made again and the search refilled."""
    from synthesis.state.search import TRIGGERS, memory_search_ensure
    from synthesis.state.selectors import recall
    from synthesis.state.services import memory_record

    scene = Scene(user)
    with connection.cursor() as cursor:
        for name in TRIGGERS:
            cursor.execute(f"DROP TRIGGER {name}")
    lost = memory_record(
        seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text="A heron on the weir."
    )
    for n in range(8):
        memory_record(seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text=f"Noon {n}")
    assert lost.pk not in [m.pk for m in recall(seat_id=scene.alice.pk, scene=["heron"], k=1)]
    memory_search_ensure()
    assert [m.pk for m in recall(seat_id=scene.alice.pk, scene=["heron"], k=1)] == [lost.pk]


def test_recall_in_the_flesh_prompt_follows_the_scene(user):
    from synthesis.state.components import MEMORIES_K
    from synthesis.state.services import memory_record

    scene = Scene(user)
    memory_record(
        seat=scene.alice, outcome=outcome_for(scene, [scene.alice]),
        text="OLD-MARKER The violin case holds a forged letter.",
    )  # fmt: skip
    for n in range(MEMORIES_K + 4):
        memory_record(
            seat=scene.alice, outcome=outcome_for(scene, [scene.alice]),
            text=f"NEW-{n:02d} a quiet afternoon",
        )  # fmt: skip
    pass_ = scene.fire(scene.alice, scene.commit(scene.alice, "I open the violin case."))
    ctx = medium.gather(pass_, flesh=True)
    prompt = "\n".join(m.content for m in medium.compile_flesh(ctx, None, MODEL))
    assert "OLD-MARKER" in prompt
    assert "NEW-00 " not in prompt  # the oldest irrelevant one made room


# -- memories told by others --------------------------------------------------------------


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    saw=st.lists(st.booleans(), min_size=3, max_size=3),
    heard=st.lists(st.booleans(), min_size=3, max_size=3),
    tellings=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=5),
)
def test_nobody_remembers_an_event_it_neither_witnessed_nor_was_told_of(user, saw, heard, tellings):
    """An event's memory goes to its witnesses, and to whoever one of them told about it
    in a later outcome both witnessed; whatever the model claims (tellers who never saw
    it, listeners who were not there, unknown names), nobody else: markers only."""
    from synthesis.state.schema import Telling

    scene = Scene(user)
    seats = [scene.alice, scene.bob, scene.tony]
    labels = medium.gather(scene.fire(scene.alice, scene.commit(scene.alice, "I wait."))).labels
    names = [labels[s.pk] for s in seats] + ["Nobody Here"]
    event = outcome_for(scene, [s for s, x in zip(seats, saw, strict=True) if x])
    markers = {s.pk: f"EVENT-MARKER-{uuid.uuid4().hex[:8]}" for s in seats}
    state_apply(
        outcome=event,
        proposal=StateProposal(
            characters=[
                CharacterChange(character=labels[s.pk], memory=f"{markers[s.pk]} the lantern")
                for s in seats
            ]
        ),
        seats=seats,
        labels=labels,
    )
    present = [s for s, x in zip(seats, heard, strict=True) if x]
    telling = outcome_for(scene, present, text="talks")
    proposal = StateProposal(
        characters=[],
        told=[
            Telling(teller=names[a], listener=names[b], about="the lantern") for a, b in tellings
        ],
    )
    state_apply(outcome=telling, proposal=proposal, seats=seats, labels=labels)
    witnesses = {s.pk for s, x in zip(seats, saw, strict=True) if x}
    here = {s.pk for s in present}
    for seat in seats:
        for memory in Memory.objects.filter(seat=seat):
            assert memory.outcome_id == event.pk
            if memory.source == "witnessed":
                assert seat.pk in witnesses and markers[seat.pk] in memory.text
            else:
                assert seat.pk not in witnesses and seat.pk in here
                assert memory.told_by_id in witnesses & here and memory.reliability < 1
                assert markers[memory.told_by_id] in memory.text
                assert labels[memory.told_by_id] in memory.text
            assert [m for m in markers.values() if m in memory.text] == [
                markers[memory.told_by_id or seat.pk]
            ]
        told = {labels[s.pk] for s in seats if s.pk in witnesses & here} & {
            names[a] for a, b in tellings if names[b] == labels[seat.pk]
        }
        expected = seat.pk in witnesses or (seat.pk in here and bool(told))
        assert Memory.objects.filter(seat=seat).exists() == expected
    from synthesis.state.selectors import recall

    for seat in seats:  # recall, whatever the scene's words, holds the seat's own only
        recalled = recall(seat_id=seat.pk, scene=[*markers.values(), "the lantern"], k=8)
        assert {m.seat_id for m in recalled} <= {seat.pk}
        assert len(recalled) == Memory.objects.filter(seat=seat).count()
    for seat in seats:  # and a told memory reaches only its listener's prompt
        prompt = flesh_prompt(scene, seat)
        mine = {m.told_by_id or seat.pk for m in Memory.objects.filter(seat=seat)}
        for other, marker in markers.items():
            assert (marker in prompt) == (other in mine)


def test_the_offline_narrator_tells_what_an_action_says_is_told(user):
    scene = Scene(user)
    event = outcome_for(scene, [scene.alice], text="hide the brass key under the stairs")
    state_pass_run(outcome_id=event.pk)
    telling = outcome_for(
        scene, [scene.alice, scene.bob], text="I tell Bob Wilson about the brass key"
    )
    state_pass_run(outcome_id=telling.pk)
    told = Memory.objects.get(seat=scene.bob, source="told")
    assert told.outcome_id == event.pk and told.told_by_id == scene.alice.pk
    assert "brass key under the stairs" in told.text and told.reliability < 1
    state = logged_in_client(scene.bob_player).get(
        f"/api/frames/{scene.frame.pk}/seats/{scene.bob.pk}/state"
    )
    assert [m["told_by"] for m in state.json()["memories"] if m["source"] == "told"] != []


# -- the significance pass ----------------------------------------------------------------


def test_the_significance_pass_weighs_new_memories_after_the_state_pass(user):
    """Queued after the state pass (its task), it weighs each unweighed memory once with the
    offline narrator (a death is unforgettable: pinned), counts the call, and leaves what
    the GM set alone."""
    from synthesis import tasks
    from synthesis.state.significance import significance_pass_run

    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice, scene.bob], text="finds the dead gardener")
    with mock.patch.object(tasks.significance_pass_task, "delay") as queued:
        state_pass_run(outcome_id=outcome.pk)  # its transaction commits: its callbacks run
    queued.assert_called_once_with(str(outcome.pk))
    Memory.objects.filter(seat=scene.bob).update(scored=True, significance=0)  # as the GM set
    done = significance_pass_run(outcome_id=outcome.pk)
    assert done.status == "done", done.error
    alice = Memory.objects.get(seat=scene.alice)
    assert (alice.significance, alice.pinned, alice.scored) == (3, True, True)
    assert Memory.objects.get(seat=scene.bob).significance == 0
    call = LLMCall.objects.get(purpose="synthesis.significance")
    assert call.subject == f"outcome:{outcome.pk}"
    assert significance_pass_run(outcome_id=outcome.pk) is None  # once per outcome


def test_the_significance_pass_caps_the_pins_letting_the_least_recent_go(user):
    from synthesis.state.services import PINS_MAX, memory_record
    from synthesis.state.significance import significance_pass_run

    scene = Scene(user)
    for n in range(PINS_MAX + 2):
        outcome = outcome_for(scene, [scene.alice])
        memory_record(seat=scene.alice, outcome=outcome, text=f"PIN-{n:02d} a death")
    significance_pass_run(outcome_id=weighed(outcome).pk)
    pinned = Memory.objects.filter(seat=scene.alice, pinned=True)
    assert pinned.count() == PINS_MAX
    assert not pinned.filter(text__startswith="PIN-00").exists()
    assert not pinned.filter(text__startswith="PIN-01").exists()


def test_a_significance_answer_that_will_not_validate_fails_visibly(user, server):
    from synthesis.state.services import memory_record
    from synthesis.state.significance import significance_pass_run

    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    outcome = outcome_for(scene, [scene.alice])
    memory_record(seat=scene.alice, outcome=outcome, text="a quiet day")
    server.queue(data={"nope": 1})
    server.queue(data={"scores": "none"})
    failed = significance_pass_run(outcome_id=weighed(outcome).pk)
    assert failed.status == "failed" and failed.error
    assert not Memory.objects.get(seat=scene.alice).scored
    gm = logged_in_client(user).get(f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/state")
    assert gm.json()["last_failure"] == failed.error


# -- the GM's edits -----------------------------------------------------------------------


def test_the_gm_edits_a_seats_state_as_deltas_and_its_player_and_the_gm_are_told(user, events):
    from synthesis.frame_events import gm_group, seat_group
    from synthesis.state.selectors import state_at

    scene = Scene(user)
    url = f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/state"
    body = {
        "mood": "angry",
        "intensity": 0.9,
        "fact": "The cellar is flooded.",
        "edges": [{"target": str(scene.bob.pk), "affinity": 85, "knowledge": "Bob lies."}],
    }
    assert logged_in_client(scene.alice_player).patch(url, body, format="json").status_code == 403
    del events[:]
    edited = logged_in_client(user).patch(url, body, format="json")
    assert edited.status_code == 200, edited.content
    state = edited.json()
    assert (state["mood"]["name"], state["mood"]["intensity"]) == ("angry", 0.9)
    assert state["facts"] == ["The cellar is flooded."]
    [edge] = state["edges"]
    assert (edge["affinity"], edge["level"], edge["knowledge"]) == (85, "soulmate", ["Bob lies."])
    deltas = StateDelta.objects.filter(seat=scene.alice)
    assert deltas.count() == 3 and all(d.by_id == user.pk and d.outcome_id is None for d in deltas)
    folded = state_at(seat=scene.alice)  # the caches are the fold of the deltas
    assert folded.seat.mood == "angry" and folded.seat.intensity == pytest.approx(0.9)
    assert folded.edges[str(scene.bob.pk)].affinity == 85
    told = [(g, e) for g, e in events if e["type"] == "state.changed"]
    assert sorted(g for g, _ in told) == sorted(
        [seat_group(scene.frame.pk, scene.alice.pk), gm_group(scene.frame.pk)]
    )
    assert all(e == {"type": "state.changed", "seat": str(scene.alice.pk)} for _, e in told)
    # what will not do: a clear 400, nothing stored
    for bad in (
        {"mood": "ecstatic"},
        {"edges": [{"target": str(scene.alice.pk), "affinity": 5}]},
        {"intensity": 3},
        {},
    ):
        refused = logged_in_client(user).patch(url, bad, format="json")
        assert refused.status_code == 400 and refused.json()["detail"], bad
    assert StateDelta.objects.filter(seat=scene.alice).count() == 3


def test_the_gm_pins_rewrites_and_removes_a_memory_audited(user, events):
    from synthesis.state.selectors import recall
    from synthesis.state.services import memory_record
    from synthesis.state_models import MemoryEdit

    scene = Scene(user)
    memory = memory_record(
        seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text="the lantern"
    )
    url = f"/api/frames/{scene.frame.pk}/seats/{scene.alice.pk}/state/memories/{memory.pk}"
    gm = logged_in_client(user)
    player = logged_in_client(scene.alice_player)
    assert player.patch(url, {"pinned": True}, format="json").status_code == 403
    body = {"pinned": True, "significance": 3, "text": "GM-REWROTE lantern"}
    answer = gm.patch(url, body, format="json")
    assert answer.status_code == 200, answer.content
    [shown] = answer.json()["memories"]
    assert (shown["pinned"], shown["significance"], shown["text"]) == (
        True,
        3,
        "GM-REWROTE lantern",
    )
    assert "GM-REWROTE" in flesh_prompt(scene, scene.alice)
    assert gm.patch(url, {"removed": True}, format="json").json()["memories"] == []
    assert recall(seat_id=scene.alice.pk, scene=["lantern"], k=8) == []
    assert "GM-REWROTE" not in flesh_prompt(scene, scene.alice)
    audit = list(MemoryEdit.objects.filter(memory=memory).values_list("by", "change"))
    rewrote = {
        "pinned": [False, True],
        "significance": [1, 3],
        "text": ["the lantern", "GM-REWROTE lantern"],
    }
    assert audit == [(user.pk, rewrote), (user.pk, {"removed": [False, True]})]
    assert Memory.objects.filter(pk=memory.pk, removed=True).exists()  # kept
    other = f"/api/frames/{scene.frame.pk}/seats/{scene.bob.pk}/state/memories/{memory.pk}"
    assert gm.patch(other, {"pinned": False}, format="json").status_code == 404  # not Bob's
    assert gm.patch(url, {}, format="json").status_code == 400


def test_a_pin_the_gm_sets_on_an_old_memory_stays_the_oldest_other_pin_goes(user):
    from synthesis.state.services import PINS_MAX, memory_edit, memory_record

    scene = Scene(user)
    old = memory_record(seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text="old")
    for n in range(PINS_MAX):
        memory_record(
            seat=scene.alice, outcome=outcome_for(scene, [scene.alice]), text=f"pin {n}",
            significance=3,
        )  # fmt: skip
    memory_edit(memory=old, by=user, pinned=True)
    pinned = Memory.objects.filter(seat=scene.alice, pinned=True)
    assert pinned.count() == PINS_MAX
    assert pinned.filter(pk=old.pk).exists() and not pinned.filter(text="pin 0").exists()


def test_a_significance_pass_over_the_budget_fails_with_that_reason(user, monkeypatch):
    from synthesis.state import significance
    from synthesis.state.services import memory_record

    scene = Scene(user)
    outcome = outcome_for(scene, [scene.alice])
    memory_record(seat=scene.alice, outcome=outcome, text="a death in the harbour")
    asked = []
    monkeypatch.setattr(significance, "budget_admits", lambda **kw: asked.append(kw) or False)
    failed = significance.significance_pass_run(outcome_id=weighed(outcome).pk)
    assert failed.status == "failed" and "budget" in failed.error
    assert asked and asked[0]["frame_id"] == scene.frame.pk
    assert not LLMCall.objects.filter(purpose="synthesis.significance").exists()
    assert not Memory.objects.get(seat=scene.alice).scored
