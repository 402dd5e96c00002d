"""Shared mode (the 0.7 case): each commit is synthesised at once, one pass at a time per
frame, into one outcome and one prose that everyone reads, written from public knowledge
only."""

import pytest

from synthesis.frame_events import frame_group, gm_group, seat_group
from synthesis.frame_selectors import frame_access
from synthesis.medium import run as run_module
from synthesis.models import Narrative, Outcome, Pass, Window
from synthesis.selectors import frame_view
from tests.synthesis.conftest import Scene, run, sent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def enqueued(monkeypatch):
    ids = []
    monkeypatch.setattr(run_module, "_enqueue", lambda pass_id: ids.append(str(pass_id)))
    return ids


def test_one_commit_narrates_everything_committed_once_for_everyone(user, events, enqueued):
    scene = Scene(user, mode="shared")
    sword = scene.commit(scene.alice, "I draw my sword.", after=1)
    shield = scene.commit(scene.bob, "I raise my shield.", after=2)
    alice_pass = scene.fire(scene.alice, sword, trigger="commit")
    bob_pass = scene.fire(scene.bob, shield, trigger="commit")

    assert run(alice_pass).status == "done"
    outcome = Outcome.objects.get(frame=scene.frame)
    assert [a["seat"] for a in outcome.actions_resolved] == [
        str(scene.alice.pk),
        str(scene.bob.pk),
    ]
    narrative = Narrative.objects.get(frame=scene.frame)
    assert narrative.shared and narrative.user_id is None and narrative.status == "done"
    assert set(narrative.liquid_ids) == {str(sword.pk), str(shield.pk)}
    sword.refresh_from_db(), shield.refresh_from_db()
    assert sword.consumed_by_id == shield.consumed_by_id == narrative.pk

    # Bob's own pass finds everything narrated: no second outcome, no second prose.
    assert run(bob_pass).status == "done"
    assert Outcome.objects.filter(frame=scene.frame).count() == 1
    assert Narrative.objects.filter(frame=scene.frame).count() == 1
    assert Window.objects.get(pk=bob_pass.window_id).status == "fired"

    # The prose goes to the frame group (everyone, the GM too) and nowhere else.
    streamed = {g for g, e in events if e["type"] in {"narrative.token", "narrative.done"}}
    assert streamed == {frame_group(scene.frame.pk)}
    assert not {gm_group(scene.frame.pk), seat_group(scene.frame.pk, scene.alice.pk)} & streamed
    for player in (scene.alice_player, scene.bob_player):
        view = frame_view(frame_access(frame_id=scene.frame.pk, user=player))
        assert [n["id"] for n in view["narratives"]] == [str(narrative.pk)]
        assert view["narratives"][0]["shared"] is True


def test_the_shared_prose_is_written_from_public_knowledge_only(user):
    scene = Scene(user, mode="shared")
    Narrative.objects.create(
        frame=scene.frame,
        seat=scene.alice,
        text="ALICE-PERSONAL-NARRATIVE-MARKER",
        trigger="expiry",
        status="done",
    )
    Narrative.objects.create(
        frame=scene.frame,
        seat=scene.alice,
        text="THE-STORY-SO-FAR-MARKER",
        trigger="commit",
        status="done",
        shared=True,
    )
    sword = scene.commit(scene.alice, "I draw my sword.")
    flesh = sent(run(scene.fire(scene.alice, sword, trigger="commit")), "flesh")

    assert "THE-STORY-SO-FAR-MARKER" in flesh  # the shared story: the control
    assert scene.bob.persona.external_truth in flesh  # how anyone sees Bob: the control
    for marker in (
        "ALICE THOMPSON-SECRET-MARKER",  # even the committer's own inside: everyone reads it
        "BOB WILSON-SECRET-MARKER",
        "TONY ROSETTI-SECRET-MARKER",
        "GROUP-SECRET-MARKER",
        "ALICE-PERSONAL-NARRATIVE-MARKER",
    ):
        assert marker not in flesh


@pytest.mark.parametrize("visibility", ["all", "own"])
def test_others_hidden_intentions_stay_out_of_the_shared_prose_scene(user, visibility):
    scene = Scene(user, mode="shared", liquid_visibility=visibility)
    scene.commit(scene.bob, "BOB-HIDDEN-INTENT-MARKER: I pocket the key.", after=1)
    sword = scene.commit(scene.alice, "I draw my sword.", after=2)
    pass_ = run(scene.fire(scene.alice, sword, trigger="commit"))
    intentions = [x for x in sent(pass_, "flesh").splitlines() if x.startswith("- Intention:")]
    # What was resolved is public through the outcome; what was intended only if shown.
    assert any("BOB-HIDDEN-INTENT-MARKER" in x for x in intentions) == (visibility == "all")
    assert intentions if visibility == "all" else not intentions


def test_one_pass_runs_at_a_time_and_hands_over_to_the_next(user, enqueued):
    scene = Scene(user, mode="shared")
    first = scene.fire(scene.alice, scene.commit(scene.alice, "I draw my sword.", after=1))
    second = scene.fire(scene.bob, scene.commit(scene.bob, "I raise my shield.", after=2))
    Pass.objects.filter(pk=first.pk).update(status="running", lease_owner="elsewhere")

    assert run(second).status == "pending"  # waits: another pass of the frame runs
    assert enqueued == []

    Pass.objects.filter(pk=first.pk).update(status="pending", lease_owner="")
    assert run(first).status == "done"
    assert enqueued == [str(second.pk)]  # the finished pass hands over to the waiting one
    assert run(second).status == "done"  # everything was narrated already: nothing more
    assert Narrative.objects.filter(frame=scene.frame).count() == 1


def test_an_interrupt_in_a_shared_frame_wakes_no_pass(user):
    scene = Scene(user, mode="shared")
    blow = scene.commit(scene.alice, "I shove Bob.", interruptive=True, targets=[scene.bob])
    run(scene.fire(scene.alice, blow, trigger="commit"))
    outcome = Outcome.objects.get(frame=scene.frame)
    assert outcome.interrupts and outcome.interrupts[0]["seat"] == str(scene.bob.pk)
    assert not Pass.objects.filter(seat=scene.bob).exists()
    assert not Window.objects.filter(seat=scene.bob).exists()
