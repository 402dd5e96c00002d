"""Rewind and regenerate (docs/synthesis.md, "Rewind and regenerate"): a dry run says what
would go and changes nothing; a rewind hides everything after its outcome — kept, never in
a prompt, REST answer, export, socket view or spectator view (markers planted in the
hidden rows prove it) — and folds the state caches again; restoring it gives back exactly
the state before (a hypothesis property); regenerating an outcome, its intentions edited or
not, rewinds it and runs its pass again; the GM alone may do any of it."""

import json
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthesis import medium
from synthesis.export import frame_export
from synthesis.frame_events import frame_group, next_seq, spectator_group
from synthesis.frame_selectors import frame_access
from synthesis.frames import spectators_set
from synthesis.models import Liquid, Narrative, Outcome, Pass, Rewind
from synthesis.rewind import frame_rewind, rewind_preview, rewind_restore, seat_states
from synthesis.selectors import frame_view, spectator_view
from synthesis.state.selectors import seat_state
from synthesis.state.services import delta_record, memory_record
from synthesis.state_models import DeltaKind, Edge, Memory, SeatState, StateDelta
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import Scene, run, sent
from tests.synthesis.test_medium import fake_model

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = "Alice Thompson"
BOB = "Bob Wilson"
KEPT = "KEPT-FACT-1001"
LATER = ("LATER-FACT-2002", "LATER-FACT-3003")  # in the outcomes after the first
LATER_PROSE = "LATER-PROSE-4004"
LATER_MEMORY = "LATER-MEMORY-5005"
LATER_LIQUID = "LATER-INTENT-6006"
HIDDEN = (*LATER, LATER_PROSE, LATER_MEMORY, LATER_LIQUID)


def bones(name: str, fact: str) -> dict:
    return {
        "actions_resolved": [{"seat": name, "action": "acts", "result": "success"}],
        "world_facts": [fact],
        "interrupts": [],
    }


@pytest.fixture
def scene(user, server):
    scene = Scene(user)
    scene.frame.medium_model = fake_model(user, server)
    scene.frame.save()
    return scene


def play(scene, server, seat, name, fact, *, intent="I wait.", prose="The hall is quiet.", at=0):
    """One outcome of `seat` with `fact`, its narrative `prose`, a memory and a delta."""
    server.queue(data=bones(name, fact))
    server.queue(text=prose)
    liquid = scene.commit(seat, intent, after=at)
    pass_ = run(scene.fire(seat, liquid))
    outcome = Outcome.objects.get(source_pass=pass_)
    other = scene.bob if seat == scene.alice else scene.alice
    outcome.witnesses = [str(scene.alice.pk), str(scene.bob.pk)]
    outcome.save(update_fields=["witnesses"])
    remembered = f"I remember {fact}" + (f" and {LATER_MEMORY}." if fact in LATER else ".")
    memory_record(seat=seat, outcome=outcome, text=remembered, significance=2)
    delta_record(seat=seat, kind=DeltaKind.EDGE, outcome=outcome, target=other, affinity=7)
    delta_record(seat=seat, kind=DeltaKind.FACT, outcome=outcome, text=f"learned {fact}")
    return outcome


def three(scene, server) -> list[Outcome]:
    """Alice, then Bob, then Alice again: the last two carry the hidden markers."""
    return [
        play(scene, server, scene.alice, ALICE, KEPT),
        play(
            scene,
            server,
            scene.bob,
            BOB,
            LATER[0],
            intent=f"I whisper {LATER_LIQUID}.",
            prose=f"{LATER_PROSE} fills the hall.",
            at=1,
        ),
        play(scene, server, scene.alice, ALICE, LATER[1], at=2),
    ]


def caches(frame) -> list:
    edges = Edge.objects.filter(frame_id=frame.pk).order_by("source", "target")
    states = SeatState.objects.filter(frame_id=frame.pk).order_by("seat")
    return [
        [
            (e.source_id, e.target_id, e.affinity, e.trust, e.knowledge)
            + (e.last_outcome_id, e.last_interaction_at)
            for e in edges
        ],
        [(s.seat_id, s.mood, s.intensity, s.facts) for s in states],
    ]


def views(scene) -> dict:
    """Everything anyone reads of the frame, minus the moving `seq`."""
    out = {}
    for who in (scene.frame.owner, scene.alice_player, scene.bob_player):
        access = frame_access(frame_id=scene.frame.pk, user=who)
        view = frame_view(access)
        view.pop("seq")
        view.pop("budget", None)
        out[who.username] = view
        export = frame_export(access)
        export.pop("exported_at")
        out[f"export:{who.username}"] = export
        for seat in (scene.alice, scene.bob):
            if access.is_gm or seat.pk in access.seat_ids:
                answer = seat_state(access=access, seat_id=seat.pk)
                out[f"state:{who.username}:{seat.pk}"] = answer
    out["spectators"] = {k: v for k, v in spectator_view(scene.frame).items() if k != "seq"}
    return json.loads(json.dumps(out, default=str))


def test_a_dry_run_lists_what_would_go_and_changes_nothing(user, scene, server):
    first, second, third = three(scene, server)
    before = views(scene)

    preview = rewind_preview(frame=scene.frame, to=first.pk)

    assert preview["to_seq"] == first.seq
    assert [o["seq"] for o in preview["outcomes"]] == [second.seq, third.seq]
    assert preview["counts"]["outcomes"] == 2
    assert preview["counts"]["narratives"] == 2
    assert preview["counts"]["liquid"] == 2
    assert preview["counts"]["memories"] == 2
    assert preview["counts"]["state_deltas"] == 4
    assert LATER_PROSE in str(preview["narratives"]) and LATER_LIQUID in str(preview["liquid"])
    assert views(scene) == before
    assert not Rewind.objects.exists()


def test_a_rewind_hides_every_later_row_from_every_reader_and_restore_gives_it_back(
    user, scene, server, events
):
    spectators_set(frame=scene.frame, enabled=True)
    first, second, third = three(scene, server)
    before, cached = views(scene), caches(scene.frame)
    assert [m for m in HIDDEN if m not in str(before)] == []

    rewind = frame_rewind(frame=scene.frame, to=first.pk, user=user)

    after = views(scene)
    for marker in HIDDEN:
        assert marker not in str(after), marker
    assert KEPT in str(after[user.username])
    # Kept in the database, hidden by the rewind.
    assert Outcome.all_objects.filter(rewound=rewind).count() == 2
    assert Narrative.all_objects.filter(rewound=rewind).count() == 2
    assert Memory.all_objects.filter(rewound=rewind).count() == 2
    assert StateDelta.all_objects.filter(rewound=rewind).count() == 4
    assert Liquid.all_objects.filter(rewound=rewind).count() == 2
    # The caches are the fold of what is left: Bob's edge went, Alice's moved once.
    alice_edge = Edge.objects.get(source=scene.alice)
    assert alice_edge.affinity == 10 + 7 and alice_edge.last_outcome_id == first.pk
    assert not Edge.objects.filter(source=scene.bob).exists()
    assert SeatState.objects.get(seat=scene.alice).facts == [f"learned {KEPT}"]
    # The record before it: every seat's state as the fold gave it.
    assert rewind.before["seats"][str(scene.alice.pk)]["seat"]["facts"] == [
        f"learned {KEPT}",
        f"learned {LATER[1]}",
    ]
    # Everyone (spectators too) is told to re-read, numbered; no marker in any event.
    told = [(g, e) for g, e in events if e["type"] == "frame.rewound"]
    assert {g for g, _ in told} == {frame_group(scene.frame.pk), spectator_group(scene.frame.pk)}
    assert told[0][1]["seq"] == rewind.seq and told[0][1]["rewind"]["to_seq"] == first.seq
    assert not any(marker in str(e) for _, e in told for marker in HIDDEN)

    # A later pass's prompts read none of it.
    server.queue(data=bones(BOB, "NEW-FACT"))
    server.queue(text="Bob looks around.")
    pass_ = run(scene.fire(scene.bob, scene.commit(scene.bob, "I look around.", after=3)))
    for marker in HIDDEN:
        assert marker not in sent(pass_, "bones") and marker not in sent(pass_, "flesh")

    restored = rewind_restore(rewind=rewind, user=user)

    # What was played since the rewind is hidden in turn, restorably; the rest is as before.
    assert restored.restored_at is not None
    since = Rewind.objects.get(kind="restore")
    assert Outcome.all_objects.get(source_pass=pass_).rewound == since
    assert views(scene) == before
    assert caches(scene.frame) == cached


def test_a_pass_still_narrating_a_rewound_outcome_writes_nothing_anyone_reads(user, scene, server):
    first = play(scene, server, scene.alice, ALICE, KEPT)
    server.queue(data=bones(BOB, LATER[0]))
    server.queue(text=f"{LATER_PROSE} at last.")
    pass_ = scene.fire(scene.bob, scene.commit(scene.bob, "I wait.", after=1))
    with mock.patch("synthesis.tasks.flesh_task.delay"):
        medium.medium_pass_run(pass_id=pass_.pk)  # its outcome stored, its narrative to come
    frame_rewind(frame=scene.frame, to=first.pk, user=user)

    medium.medium_flesh_run(pass_id=pass_.pk)  # the stream worker picks it up late

    assert not Narrative.objects.filter(seat=scene.bob).exists()
    assert LATER_PROSE not in str(views(scene))
    assert not Pass.objects.filter(pk=pass_.pk).exists()  # hidden with its outcome
    assert Pass.all_objects.get(pk=pass_.pk).window.status == "fired"  # not firing for ever


def test_what_an_ai_seat_wrote_since_goes_and_a_persons_intention_stays(user, scene, server):
    first, *_ = three(scene, server)
    reaction = Liquid.objects.create(
        frame=scene.frame, seat=scene.tony, content=f"I answer {LATER_PROSE}.", status="committed"
    )
    draft = Liquid.objects.create(
        frame=scene.frame, seat=scene.alice, author=scene.alice_player, content="I think."
    )
    rewind = frame_rewind(frame=scene.frame, to=first.pk, user=user)
    assert Liquid.all_objects.get(pk=reaction.pk).rewound == rewind
    assert Liquid.objects.filter(pk=draft.pk).exists()


def test_a_frame_with_rewinds_is_deleted_whole(user, scene, server):
    first, *_ = three(scene, server)
    frame_rewind(frame=scene.frame, to=first.pk, user=user)
    scene.frame.delete()
    assert not Outcome.all_objects.exists() and not Rewind.objects.exists()


def test_a_pass_gathered_before_a_rewind_gathers_again(user, scene, server, monkeypatch):
    first, *_ = three(scene, server)
    pass_ = scene.fire(scene.bob, scene.commit(scene.bob, "I sit.", after=4))
    real = medium.run.gather
    gathered: list = []

    def gather_then_rewind(pass_, **kwargs):
        ctx = real(pass_, **kwargs)
        if not gathered:  # the rewind lands while the first context is in the model's hands
            frame_rewind(frame=scene.frame, to=first.pk, user=user)
        gathered.append(ctx)
        return ctx

    monkeypatch.setattr(medium.run, "gather", gather_then_rewind)
    server.queue(data=bones(BOB, "SAT-DOWN"))
    server.queue(data=bones(BOB, "SAT-DOWN"))
    server.queue(text="Bob sits.")

    done = run(pass_)

    assert done.status == "done"
    tries = [e["messages"] for e in done.messages if e["step"] == "bones"]
    assert len(tries) == 2 and LATER[1] in str(tries[0])  # the first read the later outcomes
    for marker in HIDDEN:
        assert marker not in str(tries[-1])
    outcome = Outcome.objects.get(source_pass=done)
    assert "SAT-DOWN" in outcome.world_facts


@pytest.fixture
def no_enqueue(monkeypatch):
    ids: list[str] = []
    monkeypatch.setattr("synthesis.windows.medium_pass_enqueue", lambda pk: ids.append(str(pk)))
    monkeypatch.setattr("synthesis.windows.window_fire_at", lambda *a, **k: None)
    return ids


def test_the_gm_regenerates_an_earlier_outcome_with_an_edited_intention(
    user, scene, server, no_enqueue
):
    first, second, third = three(scene, server)
    original = Liquid.objects.get(pk=second.liquid_ids[0])
    gm = logged_in_client(user)
    dry = gm.post(f"/api/outcomes/{second.pk}/regenerate", {"dry_run": True}, format="json")
    assert dry.status_code == 200 and dry.json()["counts"]["outcomes"] == 2
    assert dry.json()["inputs"] == [
        {"liquid": str(original.pk), "seat": str(scene.bob.pk), "content": original.content}
    ]
    assert Outcome.objects.filter(frame=scene.frame).count() == 3  # a dry run changes nothing

    response = gm.post(
        f"/api/outcomes/{second.pk}/regenerate",
        {"inputs": [{"liquid": str(original.pk), "content": "I shout instead."}]},
        format="json",
    )

    assert response.status_code == 202, response.content
    body = response.json()
    rewind = Rewind.objects.get(pk=body["rewind"])
    assert rewind.kind == "regenerate" and rewind.to_seq == second.seq - 1
    assert rewind.by == user and rewind.edits == [
        {
            "liquid": str(original.pk),
            "seat": str(scene.bob.pk),
            "before": original.content,
            "after": "I shout instead.",
        }
    ]
    assert set(Outcome.objects.filter(frame=scene.frame)) == {first}
    copy = Liquid.objects.get(frame=scene.frame, status="committed")
    assert copy.content == "I shout instead." and copy.seat == scene.bob
    (pass_id,) = [p["id"] for p in body["passes"]]
    assert no_enqueue == [pass_id]
    server.queue(data=bones(BOB, "SHOUTED"))
    server.queue(text="Bob shouts.")
    done = run(Pass.objects.get(pk=pass_id))
    assert "I shout instead." in sent(done, "bones") and LATER_LIQUID not in sent(done, "bones")
    assert Outcome.objects.filter(frame=scene.frame).count() == 2

    # Restoring the regenerate brings the original outcomes back and hides the new one.
    restored = logged_in_client(user).post(
        f"/api/frames/{scene.frame.pk}/rewinds/{rewind.pk}/restore"
    )
    assert restored.status_code == 200, restored.content
    assert set(Outcome.objects.filter(frame=scene.frame)) == {first, second, third}


def test_regenerating_a_pass_retries_a_failed_one_and_regenerates_a_done_ones_outcome(
    user, scene, server, no_enqueue, monkeypatch
):
    first, second = (
        play(scene, server, scene.alice, ALICE, KEPT),
        play(scene, server, scene.bob, BOB, LATER[0], at=1),
    )
    gm = logged_in_client(user)
    done = gm.post(f"/api/passes/{second.source_pass_id}/regenerate", format="json")
    assert done.status_code == 202 and done.json()["rewind"]
    assert set(Outcome.objects.filter(frame=scene.frame)) == {first}

    retried: list = []
    monkeypatch.setattr(
        "synthesis.regenerate.medium_pass_retry", lambda *, pass_: retried.append(pass_) or pass_
    )
    failed = Pass.objects.create(
        frame=scene.frame, seat=scene.alice, kind="medium", trigger="expiry", status="failed"
    )
    response = gm.post(f"/api/passes/{failed.pk}/regenerate", format="json")
    assert response.status_code == 202 and "rewind" not in response.json()
    assert retried == [failed]


def test_only_the_gm_rewinds_restores_or_regenerates_and_bad_asks_are_refused(
    user, scene, server, no_enqueue
):
    first, second = (
        play(scene, server, scene.alice, ALICE, KEPT),
        play(scene, server, scene.bob, BOB, LATER[0], at=1),
    )
    url = f"/api/frames/{scene.frame.pk}"
    player, outsider, gm = (
        logged_in_client(scene.alice_player),
        logged_in_client(UserFactory()),
        logged_in_client(user),
    )
    ask = {"to": str(first.pk), "dry_run": True}
    assert player.post(f"{url}/rewind", ask, format="json").status_code == 403
    assert outsider.post(f"{url}/rewind", ask, format="json").status_code == 404
    assert player.get(f"{url}/rewinds").status_code == 403
    assert player.post(f"/api/outcomes/{second.pk}/regenerate").status_code == 403
    assert outsider.post(f"/api/passes/{second.source_pass_id}/regenerate").status_code == 404

    dry = gm.post(f"{url}/rewind", ask, format="json")
    assert dry.status_code == 200 and dry.json()["counts"]["outcomes"] == 1
    assert gm.post(f"{url}/rewind", {"to": "nope"}, format="json").status_code == 400
    assert gm.post(f"{url}/rewind", {"to": str(second.pk)}, format="json").status_code == 409
    made = gm.post(f"{url}/rewind", {"to": str(first.pk)}, format="json")
    assert made.status_code == 201 and made.json()["counts"]["outcomes"] == 1
    # The rewound outcome is gone for everyone, its id included.
    gone = gm.post(f"{url}/rewind", {"to": str(second.pk), "dry_run": True}, format="json")
    assert gone.status_code == 404
    listed = gm.get(f"{url}/rewinds").json()["rewinds"]
    assert [r["restorable"] for r in listed] == [True]
    rid = listed[0]["id"]
    assert player.post(f"{url}/rewinds/{rid}/restore").status_code == 403
    assert gm.post(f"{url}/rewinds/{rid}/restore").status_code == 200
    again = gm.post(f"{url}/rewinds/{rid}/restore")
    assert again.status_code == 409 and "already" in again.json()["detail"]
    bad = gm.post(
        f"/api/outcomes/{second.pk}/regenerate",
        {"inputs": [{"liquid": str(first.liquid_ids[0]), "content": "x"}]},
        format="json",
    )
    assert bad.status_code == 400 and "inputs" in bad.json()["errors"]


def test_an_older_rewind_waits_for_the_newer_one_to_be_restored(user, scene, server):
    first, second, third = three(scene, server)
    older = frame_rewind(frame=scene.frame, to=second.pk, user=user)
    newer = frame_rewind(frame=scene.frame, to=first.pk, user=user)
    gm = logged_in_client(user)
    url = f"/api/frames/{scene.frame.pk}/rewinds"
    refused = gm.post(f"{url}/{older.pk}/restore")
    assert refused.status_code == 409 and "newer" in refused.json()["detail"]
    assert gm.post(f"{url}/{newer.pk}/restore").status_code == 200
    assert gm.post(f"{url}/{older.pk}/restore").status_code == 200
    assert set(Outcome.objects.filter(frame=scene.frame)) == {first, second, third}


# ---- the property: rewind then restore gives back exactly the state before ----


def _rows(frame) -> dict:
    """Every row a rewind may hide (visible ones only) and the caches, comparable."""
    return {
        "outcomes": sorted(Outcome.objects.filter(frame=frame).values_list("pk", "seq")),
        "memories": sorted(Memory.objects.filter(frame_id=frame.pk).values_list("pk", "text")),
        "deltas": sorted(StateDelta.objects.filter(frame_id=frame.pk).values_list("pk", flat=True)),
        "caches": caches(frame),
    }


STEP = st.tuples(
    st.sampled_from(["alice", "bob"]),
    st.integers(-25, 25),
    st.integers(-25, 25),
    st.sampled_from(["", "happy", "angry", "sad"]),
    st.floats(-0.5, 0.5, allow_nan=False),
    st.booleans(),  # a GM edit after it
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, min_size=2, max_size=6), data=st.data())
def test_rewind_then_restore_gives_back_exactly_the_prior_state(user, steps, data):
    scene = Scene(user)
    frame = scene.frame
    outcomes = []
    for name, affinity, trust, mood, intensity, gm_edit in steps:
        seat, other = (scene.alice, scene.bob) if name == "alice" else (scene.bob, scene.alice)
        outcome = Outcome.objects.create(
            frame=frame, seq=next_seq(frame.pk), seat=seat, witnesses=[str(seat.pk)]
        )
        outcomes.append(outcome)
        delta_record(
            seat=seat,
            kind=DeltaKind.EDGE,
            outcome=outcome,
            target=other,
            affinity=affinity,
            trust=trust,
            text=f"fact {outcome.seq}",
        )
        delta_record(
            seat=seat, kind=DeltaKind.MOOD, outcome=outcome, mood=mood, intensity=intensity
        )
        memory_record(seat=seat, outcome=outcome, text=f"memory {outcome.seq}")
        if gm_edit:
            delta_record(seat=other, kind=DeltaKind.FACT, by=user, text=f"gm {outcome.seq}")
    before = _rows(frame)
    point = data.draw(st.sampled_from(outcomes[:-1]))

    rewind = frame_rewind(frame=frame, to=point.pk, user=user)
    assert max(seq for _, seq in _rows(frame)["outcomes"]) == point.seq
    rewind_restore(rewind=rewind, user=user)

    assert _rows(frame) == before
    # The pre-rewind record is the state restored: every seat's fold as it was.
    assert seat_states(frame=frame)["seats"] == rewind.before["seats"]


def test_a_rewind_takes_a_frame_snapshot_first_for_the_gm_to_download(user, scene, server):
    from synthesis.snapshot_models import Snapshot
    from synthesis.snapshots.schema import FrameSnapshot

    first, _, _ = three(scene, server)
    rewind = frame_rewind(frame=scene.frame, to=first.pk, user=user)

    # Every seat's state just before (the hidden memories too), shaped as the periodic ones.
    (taken,) = Snapshot.objects.filter(frame=scene.frame, kind="rewind")
    assert taken.rewind == rewind and taken.by == user
    assert taken.data["format"] == "lmix-frame-snapshot"
    assert len(taken.data["seats"]) == 3 and LATER_MEMORY in json.dumps(taken.data)
    gm = logged_in_client(user)
    url = f"/api/frames/{scene.frame.pk}/snapshots"
    (listed,) = [s for s in gm.get(url).json()["snapshots"] if s["kind"] == "rewind"]
    assert listed["rewind"] == rewind.pk and listed["by"] == user.username
    download = gm.get(f"{url}/{taken.pk}")
    assert download.status_code == 200 and LATER_MEMORY in download.content.decode()
    assert f"rewind-{rewind.pk}-" in download["Content-Disposition"]
    # The GM's alone.
    assert logged_in_client(scene.alice_player).get(f"{url}/{taken.pk}").status_code == 403
    FrameSnapshot.model_validate(taken.data)
    # A seat restores from it by id, as from a periodic one: Alice's later fact is back.
    body = {"seat": str(scene.alice.pk), "snapshot_id": str(taken.pk), "restore": ["facts"]}
    answer = gm.post(url, body, content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert f"learned {LATER[1]}" in SeatState.objects.get(seat=scene.alice).facts

    # A restore rewinds what was played since first: that one is snapshotted too.
    server.queue(data=bones(BOB, "NEW-FACT"))
    server.queue(text="Bob looks around.")
    run(scene.fire(scene.bob, scene.commit(scene.bob, "I look around.", after=3)))
    rewind_restore(rewind=rewind, user=user)
    since = Rewind.objects.get(kind="restore")
    assert Snapshot.objects.filter(kind="rewind", rewind=since).count() == 1
