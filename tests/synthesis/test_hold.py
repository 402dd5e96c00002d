"""The outcome leak guard holds (docs/synthesis.md, "The secret guard"): an outcome the
secret guard flags, in a frame that holds, reaches nobody but the GM — no other socket,
REST answer (snapshot, spectators', export) or later prompt — until the GM releases, edits
or regenerates it; the narratives built on it wait, held, and arrive after the release.
A marker planted in the model's answer shows where the outcome went."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from synthesis import medium
from synthesis.ai_seats import ai_messages
from synthesis.export import frame_export
from synthesis.frame_events import frame_group, gm_group, seat_group, spectator_group
from synthesis.frame_selectors import frame_access, seats_load
from synthesis.frames import spectators_set
from synthesis.medium import run as run_module
from synthesis.medium.context import gather
from synthesis.medium.run import passes_sweep
from synthesis.models import Narrative, Outcome, Pass
from synthesis.outcomes import outcome_regenerate, outcome_release
from synthesis.selectors import frame_view, spectator_view
from tests.conftest import logged_in_client
from tests.synthesis.conftest import Scene, run, sent
from tests.synthesis.test_medium import fake_model

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "HELD-FACT-7731"
# Repeats Bob's internal truth (tests/productions/conftest.py), which Alice's action did
# not reveal: the guard flags it.
LEAK = f"Everyone can tell: BOB WILSON-SECRET-MARKER. {MARKER}"
ALICE = "Alice Thompson"
BOB = "Bob Wilson"


def acts(*names: str) -> list[dict]:
    return [{"seat": name, "action": "acts", "result": "success"} for name in names]


def bones(*names: str, facts=(), interrupts=()) -> dict:
    return {
        "actions_resolved": acts(*names),
        "world_facts": list(facts),
        "interrupts": list(interrupts),
    }


@pytest.fixture
def scene(user, server):
    """Alice and Bob played by people, Tony by an assistant; the frame holds (its
    default) and plays on the fake model."""
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    return scene


@pytest.fixture
def enqueued(monkeypatch):
    """Pass ids the GM's tools enqueued, instead of enqueued."""
    ids: list[str] = []
    monkeypatch.setattr("synthesis.outcomes.medium_pass_enqueue", lambda pk: ids.append(str(pk)))
    return ids


@pytest.fixture
def reactions(monkeypatch):
    """AI seats' reactions and interrupts an outcome set off, recorded instead of made."""
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(
        "synthesis.ai_seats.ai_react",
        lambda *, outcome, frame, seats: calls.append(("ai", str(outcome.pk))) or [],
    )
    monkeypatch.setattr(
        "synthesis.windows.window_interrupt",
        lambda **kw: calls.append(("interrupt", str(kw["seat_id"]))),
    )
    return calls


def view(scene, who):
    return frame_view(frame_access(frame_id=scene.frame.pk, user=who))


def not_the_gms(scene, events) -> list[tuple[str, dict]]:
    return [(g, e) for g, e in events if g != gm_group(scene.frame.pk)]


def hold_alices(scene, server, *, facts=(LEAK,), interrupts=(), with_bob=False) -> Pass:
    """Alice acts; the model's outcome repeats Bob's secret (and the marker): held."""
    names = (ALICE, BOB) if with_bob else (ALICE,)
    server.queue(data=bones(*names, facts=facts, interrupts=interrupts))
    liquid = scene.commit(scene.alice, "I look at Bob.", interruptive=bool(interrupts))
    liquids = [liquid]
    if with_bob:
        liquids.append(scene.commit(scene.bob, "I hum.", after=1))
    pass_ = run(scene.fire(scene.alice, liquid))
    return pass_


def test_a_held_outcome_reaches_no_one_but_the_gm_and_its_narrative_waits(
    user, scene, server, events, enqueued
):
    spectators_set(frame=scene.frame, enabled=True)
    pass_ = hold_alices(scene, server)

    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.held and outcome.flags and MARKER in str(outcome.world_facts)
    assert pass_.status == "held" and pass_.waiting_on == outcome and pass_.lease_owner == ""
    assert not Narrative.objects.filter(frame=scene.frame).exists()  # its narrative waits
    assert len(server.requests) == 1  # the bones call only

    # Sockets: the GM's group reads it whole; each player's seat a placeholder in the same
    # seq; the frame group and the spectators nothing.
    created = [(g, e) for g, e in events if e["type"] == "outcome.created"]
    groups = {g for g, _ in created}
    assert groups == {
        gm_group(scene.frame.pk),
        seat_group(scene.frame.pk, scene.alice.pk),
        seat_group(scene.frame.pk, scene.bob.pk),
    }
    assert {e["seq"] for _, e in created} == {outcome.seq}
    for group, event in created:
        if group != gm_group(scene.frame.pk):
            assert event["outcome"] == {
                "id": str(outcome.pk),
                "seq": outcome.seq,
                "seat": None,
                "actions_resolved": [],
                "world_facts": [],
                "interrupts": [],
                "witnesses": [],
                "held": True,
                "released_at": None,
                "edited_at": None,
                "created_at": outcome.created_at.isoformat(),
            }
    assert all(MARKER not in str(e) for _, e in not_the_gms(scene, events))
    assert not [e for g, e in events if g == spectator_group(scene.frame.pk) and "outcome" in e]

    # REST: the players' snapshots hold the placeholder, the GM's the outcome with its
    # flags; the spectators' nothing; the players' exports nothing.
    for player in (scene.alice_player, scene.bob_player):
        seen = view(scene, player)
        assert MARKER not in str(seen)
        assert [o["held"] for o in seen["outcomes"]] == [True]
        export = frame_export(frame_access(frame_id=scene.frame.pk, user=player))
        assert MARKER not in str(export) and export["outcomes"] == []
    gm = view(scene, user)
    assert gm["outcomes"][0]["world_facts"] == outcome.world_facts
    assert gm["outcomes"][0]["flags"] == outcome.flags and gm["leak_guard"] == "hold"
    assert gm["outcomes"][0]["held"] is True
    assert MARKER in str(frame_export(frame_access(frame_id=scene.frame.pk, user=user)))
    assert (
        MARKER not in str(spectator_view(scene.frame))
        and not spectator_view(scene.frame)["outcomes"]
    )

    # The GM releases it: everyone reads it (spectators too), numbered; the pass runs on.
    events.clear()
    response = logged_in_client(user).post(f"/api/outcomes/{outcome.pk}/release")
    assert response.status_code == 200, response.content
    assert response.json()["held"] is False and response.json()["released_at"]
    released = [(g, e) for g, e in events if e["type"] == "outcome.released"]
    assert {g for g, _ in released} == {
        frame_group(scene.frame.pk),
        spectator_group(scene.frame.pk),
    }
    assert all(MARKER in str(e) and e["seq"] > outcome.seq for _, e in released)
    outcome.refresh_from_db()
    assert not outcome.held and outcome.released_by == user
    assert enqueued == [str(pass_.pk)]
    pass_.refresh_from_db()
    assert pass_.status == "pending" and pass_.waiting_on is None

    server.queue(text="Alice watches Bob closely.")
    pass_ = run(pass_)
    assert pass_.status == "done"
    assert len(server.requests) == 2  # its stored outcome kept: no second bones call
    narrative = Narrative.objects.get(source_pass=pass_)
    assert narrative.outcome_ids == [str(outcome.pk)]
    assert MARKER in view(scene, scene.bob_player)["outcomes"][0]["world_facts"][0]
    assert MARKER in str(spectator_view(scene.frame))


def test_no_other_pass_reads_a_held_outcome_before_its_release(
    user, scene, server, enqueued, reactions
):
    held = hold_alices(scene, server)
    server.queue(data=bones(BOB))
    server.queue(text="Bob hums a tune.")
    bobs = run(scene.fire(scene.bob, scene.commit(scene.bob, "I hum.", after=5)))
    assert bobs.status == "done"
    assert MARKER not in sent(bobs, "bones") and MARKER not in sent(bobs, "flesh")
    # A held outcome wakes nobody and no AI seat (Bob's own outcome may).
    assert not [call for call in reactions if call[1] == str(held.waiting_on_id)]

    logged_in_client(user).post(f"/api/outcomes/{held.waiting_on_id}/release")
    assert ("ai", str(held.waiting_on_id)) in reactions
    server.queue(data=bones(BOB))
    server.queue(text="Bob stops humming.")
    later = run(scene.fire(scene.bob, scene.commit(scene.bob, "I stop.", after=10)))
    assert MARKER in sent(later, "bones")  # released: the earlier outcomes hold it now


def test_a_held_outcomes_interrupts_wait_for_its_release(user, scene, server, enqueued, reactions):
    held = hold_alices(scene, server, interrupts=[{"seat": BOB, "reason": "Alice grabs you."}])
    outcome = Outcome.objects.get(pk=held.waiting_on_id)
    assert outcome.interrupts and not reactions
    logged_in_client(user).post(f"/api/outcomes/{outcome.pk}/release")
    assert ("interrupt", str(scene.bob.pk)) in reactions


def test_a_pass_whose_liquid_a_held_outcome_resolved_waits_for_it_too(
    user, scene, server, enqueued
):
    alices = hold_alices(scene, server, with_bob=True)
    outcome = alices.waiting_on
    bob_liquid = scene.bob.liquid.get()
    assert outcome.liquid_ids == [str(alices.window.liquid.get().pk), str(bob_liquid.pk)]

    bobs = run(scene.fire(scene.bob, bob_liquid))  # resolved already: nothing to call
    assert bobs.status == "held" and bobs.waiting_on == outcome
    assert len(server.requests) == 1
    assert MARKER not in str(bobs.messages)

    logged_in_client(user).post(f"/api/outcomes/{outcome.pk}/release")
    assert sorted(enqueued) == sorted([str(alices.pk), str(bobs.pk)])
    server.queue(text="Alice stares.")
    server.queue(text="Bob hums on.")
    assert run(alices).status == "done" and run(bobs).status == "done"
    assert Narrative.objects.filter(frame=scene.frame).count() == 2


def test_the_gm_edits_an_outcome_recorded_and_told_to_whom_it_may_be(
    user, scene, server, events, enqueued
):
    spectators_set(frame=scene.frame, enabled=True)
    outcome = hold_alices(scene, server).waiting_on
    gm = logged_in_client(user)
    events.clear()

    wrong = gm.patch(f"/api/outcomes/{outcome.pk}", {"actions": ["a", "b"]}, format="json")
    assert wrong.status_code == 400 and "actions" in wrong.json()["errors"]
    assert (
        gm.patch(f"/api/outcomes/{outcome.pk}", {"world_facts": ["  "]}, format="json").status_code
        == 400
    )

    edited = gm.patch(
        f"/api/outcomes/{outcome.pk}",
        {"actions": ["Alice glances at Bob."], "world_facts": ["The room is quiet."]},
        format="json",
    )
    assert edited.status_code == 200, edited.content
    outcome.refresh_from_db()
    assert outcome.world_facts == ["The room is quiet."] and outcome.flags == []
    assert outcome.actions_resolved[0]["action"] == "Alice glances at Bob."
    assert outcome.edited_by == user and outcome.edited_at and outcome.held
    # Held: the GM's alone, unnumbered.
    assert [(g, e["type"], "seq" in e) for g, e in events] == [
        (gm_group(scene.frame.pk), "outcome.edited", False)
    ]

    gm.post(f"/api/outcomes/{outcome.pk}/release")
    events.clear()
    gm.patch(f"/api/outcomes/{outcome.pk}", {"world_facts": [LEAK]}, format="json")
    told = [(g, e["type"]) for g, e in events]
    assert told == [
        (frame_group(scene.frame.pk), "outcome.edited"),
        (spectator_group(scene.frame.pk), "outcome.edited"),
        (gm_group(scene.frame.pk), "outcome.flagged"),
    ]
    outcome.refresh_from_db()
    assert outcome.flags and not outcome.held  # flagged again; released stays released
    assert "flags" not in events[0][1]["outcome"] and events[2][1]["flags"] == outcome.flags


def test_the_gm_regenerates_a_held_outcome_and_its_pass_runs_its_bones_again(
    user, scene, server, events, enqueued
):
    pass_ = hold_alices(scene, server)
    outcome = pass_.waiting_on
    events.clear()

    response = logged_in_client(user).post(f"/api/outcomes/{outcome.pk}/regenerate")
    assert response.status_code == 202, response.content
    assert response.json() == {"passes": [{"id": str(pass_.pk), "status": "pending"}]}
    assert not Outcome.objects.filter(pk=outcome.pk).exists()
    assert [(g, e["type"], e["outcome"]) for g, e in events] == [
        (frame_group(scene.frame.pk), "outcome.discarded", str(outcome.pk))
    ]
    assert enqueued == [str(pass_.pk)]
    pass_.refresh_from_db()
    assert pass_.status == "pending" and pass_.attempts == 0

    server.queue(data=bones(ALICE, facts=["The lamp flickers."]))
    server.queue(text="Alice looks at Bob; the lamp flickers.")
    pass_ = run(pass_)
    assert pass_.status == "done"
    again = Outcome.objects.get(frame=scene.frame)
    assert not again.held and again.world_facts == ["The lamp flickers."]
    assert MARKER not in str(view(scene, scene.bob_player))


def test_the_gms_tools_answer_clearly_who_may_and_when(user, scene, server, enqueued):
    outcome = hold_alices(scene, server).waiting_on
    player = logged_in_client(scene.alice_player)
    for path in ("release", "regenerate"):
        response = player.post(f"/api/outcomes/{outcome.pk}/{path}")
        assert response.status_code == 403 and "GM" in response.json()["detail"]
    assert (
        player.patch(
            f"/api/outcomes/{outcome.pk}", {"world_facts": ["x"]}, format="json"
        ).status_code
        == 403
    )
    gm = logged_in_client(user)
    assert gm.post(f"/api/outcomes/{outcome.pk}/release").status_code == 200
    again = gm.post(f"/api/outcomes/{outcome.pk}/release")
    assert again.status_code == 409 and "not held" in again.json()["detail"]
    # Read by everyone now: regenerating it rewinds it first (tests/synthesis/test_rewind.py).
    regenerated = gm.post(f"/api/outcomes/{outcome.pk}/regenerate")
    assert regenerated.status_code == 202 and regenerated.json()["rewind"]


def test_a_frame_that_flags_shows_the_outcome_and_warns_the_gm(user, scene, server, events):
    scene.frame.leak_guard = "flag"
    scene.frame.save()
    server.queue(text="Alice looks up.")
    pass_ = hold_alices(scene, server)
    assert pass_.status == "done"
    outcome = Outcome.objects.get(frame=scene.frame)
    assert not outcome.held and outcome.flags
    created = [(g, e) for g, e in events if e["type"] == "outcome.created"]
    assert [g for g, _ in created] == [frame_group(scene.frame.pk), spectator_group(scene.frame.pk)]
    assert MARKER in str(created[0][1])
    flagged = [g for g, e in events if e["type"] == "outcome.flagged"]
    assert flagged == [gm_group(scene.frame.pk)]


def test_the_sweep_and_a_dead_worker_leave_a_held_pass_alone(scene, server, monkeypatch):
    pass_ = hold_alices(scene, server)
    long_ago = timezone.now() - timedelta(hours=1)
    Pass.objects.filter(pk=pass_.pk).update(updated_at=long_ago, heartbeat_at=long_ago)
    requeued = []
    monkeypatch.setattr("synthesis.medium.run._enqueue", lambda pk: requeued.append(pk))
    with mock.patch("synthesis.tasks.flesh_task.delay") as flesh:
        counts = passes_sweep(pending_after=0, lapsed_after=0)
    assert counts == {"requeued": 0, "restarted": 0, "failed": 0}
    assert not requeued and not flesh.called
    assert Pass.objects.get(pk=pass_.pk).status == "held"
    # A late or duplicate task finds nothing to claim either.
    medium.medium_pass_run(pass_id=pass_.pk)
    medium.medium_flesh_run(pass_id=pass_.pk)
    assert Pass.objects.get(pk=pass_.pk).status == "held"
    assert not Narrative.objects.filter(frame=scene.frame).exists()


def test_the_frame_setting_is_chosen_at_creation_and_changed_by_the_gm(user, scene):
    gm = logged_in_client(user)
    response = gm.patch(f"/api/frames/{scene.frame.pk}", {"leak_guard": "flag"}, format="json")
    assert response.status_code == 200 and response.json()["leak_guard"] == "flag"
    bad = gm.patch(f"/api/frames/{scene.frame.pk}", {"leak_guard": "maybe"}, format="json")
    assert bad.status_code == 400 and "leak_guard" in bad.json()["errors"]
    created = gm.post(
        f"/api/productions/{scene.frame.production_id}/frames",
        {"name": "Another", "leak_guard": "flag"},
        format="json",
    )
    assert created.status_code == 201 and created.json()["leak_guard"] == "flag"
    default = gm.post(
        f"/api/productions/{scene.frame.production_id}/frames", {"name": "Third"}, format="json"
    )
    assert default.json()["leak_guard"] == "hold"


def test_in_a_shared_frame_the_next_pass_still_runs_and_the_prose_waits_for_the_release(
    user, server, monkeypatch, enqueued
):
    scene = Scene(user, mode="shared")
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    handed = []
    monkeypatch.setattr("synthesis.medium.run._enqueue", lambda pk: handed.append(str(pk)))
    server.queue(data=bones(ALICE, facts=[LEAK]))
    looks = scene.commit(scene.alice, "I look at Bob.")
    alices = run(scene.fire(scene.alice, looks, trigger="commit"))
    assert alices.status == "held"
    bob_liquid = scene.commit(scene.bob, "I hum.", after=5)
    bobs = scene.fire(scene.bob, bob_liquid, trigger="commit")

    server.queue(data=bones(BOB))
    bobs = run(bobs)  # held passes are not running: the frame's next pass is claimed
    # Bob's outcome is everyone's; the one prose, which tells Alice's too, waits for it.
    assert not Outcome.objects.get(source_pass=bobs).held
    assert bobs.status == "held" and bobs.waiting_on_id == alices.waiting_on_id
    assert MARKER not in sent(bobs, "bones")

    logged_in_client(user).post(f"/api/outcomes/{alices.waiting_on_id}/release")
    server.queue(text="Alice looks at Bob; Bob hums.")
    assert run(alices).status == "done" and run(bobs).status == "done"
    narrative = Narrative.objects.get(frame=scene.frame)
    assert narrative.shared and MARKER in sent(narrative.source_pass, "flesh")
    assert set(narrative.liquid_ids) == {str(looks.pk), str(bob_liquid.pk)}


def test_a_pass_that_finds_its_held_outcome_regenerated_meanwhile_runs_its_bones_again(
    user, scene, server, monkeypatch, enqueued
):
    alices = hold_alices(scene, server, with_bob=True)
    bob_liquid = scene.bob.liquid.get()
    real_step = run_module.bones_step

    def regenerated_meanwhile(ctx, **kwargs):
        found = real_step(ctx, **kwargs)
        outcome_regenerate(outcome=Outcome.objects.get(pk=alices.waiting_on_id))
        return found

    monkeypatch.setattr(run_module, "bones_step", regenerated_meanwhile)
    again = []
    monkeypatch.setattr(run_module, "_enqueue", lambda pk: again.append(str(pk)))
    bobs = run(scene.fire(scene.bob, bob_liquid))
    assert bobs.status == "pending" and again == [str(bobs.pk)]
    assert not Narrative.objects.filter(frame=scene.frame).exists()  # nothing narrated unresolved


def test_ai_seats_and_epilogues_read_a_held_outcome_only_once_released(
    user, scene, server, enqueued
):
    outcome = hold_alices(scene, server).waiting_on
    epilogue = Pass.objects.create(
        frame=scene.frame, seat=scene.bob, kind="epilogue", trigger="epilogue"
    )

    def read() -> str:
        seats = seats_load(frame=scene.frame)
        tony = next(s for s in seats if s.pk == scene.tony.pk)
        asked = "\n".join(m.content for m in ai_messages(seat=tony, seats=seats, outcome=None))
        return asked + str([o.world_facts for o in gather(epilogue).outcomes])

    assert MARKER not in read()
    outcome_release(outcome=outcome, user=user)
    assert MARKER in read()
