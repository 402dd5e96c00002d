"""Scenes (synthesis/scenes/): the first opens with the frame; the GM's button, a new place
an outcome states or a long pause closes one; its summaries are written queued, per point
of view (only what the character witnessed) and publicly (only what everyone saw, no
secret); prompts then carry the older scenes' summaries instead of their outcomes, so
their size stays flat however long the play."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction

from lmix.models import LLMCall, LLMModel
from synthesis import medium
from synthesis.frame_events import next_seq
from synthesis.medium.bones import Bones, bones_wire
from synthesis.models import Frame, Liquid, Outcome, Rewind
from synthesis.regenerate import regenerate_preview
from synthesis.rewind import frame_rewind, rewind_preview, rewind_restore
from synthesis.scene_models import Scene as PlayScene
from synthesis.scene_models import SceneSummary
from synthesis.scenes import run as scene_run
from synthesis.scenes import services
from synthesis.scenes.run import scene_summary_run
from synthesis.scenes.services import scene_after_outcome, scene_close
from synthesis.state_models import Edge
from tests.conftest import logged_in_client
from tests.synthesis.conftest import Scene
from tests.synthesis.test_rewind import views

pytestmark = pytest.mark.django_db(transaction=True)
MODEL = LLMModel(model_id="gpt-4o")  # a 128k window: nothing is trimmed
SECRETS = ("ALICE THOMPSON-SECRET-MARKER", "BOB WILSON-SECRET-MARKER", "GROUP-SECRET-MARKER")


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    """The scene summaries' task, caught: a test runs it when it says so."""
    sent: list = []
    monkeypatch.setattr(services, "scene_summary_enqueue", sent.append)
    return sent


def play(scene: Scene, text: str, *, witnesses=None, seat=None, location: str = "") -> Outcome:
    """An outcome as a pass stores it: the frame's next seq, seen by `witnesses` (all)."""
    seat = seat or scene.alice
    witnesses = witnesses or [scene.alice, scene.bob, scene.tony]
    with transaction.atomic():
        return Outcome.objects.create(
            frame=scene.frame,
            seq=next_seq(scene.frame.pk),
            seat=seat,
            actions_resolved=[{"seat": str(seat.pk), "action": text, "result": "success"}],
            witnesses=[str(s.pk) for s in witnesses],
            location=location,
        )


def summarise(queued: list) -> None:
    while queued:
        scene_summary_run(scene_id=queued.pop(0))


def flesh_prompt(scene: Scene, seat) -> str:
    pass_ = scene.fire(seat, scene.commit(seat, "I look around."))
    ctx = medium.gather(pass_, flesh=True)
    Liquid.objects.filter(frame=scene.frame).update(status="consumed")  # measured only
    return "\n".join(m.content for m in medium.compile_flesh(ctx, None, MODEL))


def bones_prompt(scene: Scene, seat) -> str:
    pass_ = scene.fire(seat, scene.commit(seat, "I look around."))
    ctx = medium.gather(pass_)
    Liquid.objects.filter(frame=scene.frame).update(status="consumed")
    return "\n".join(m.content for m in medium.compile_bones(ctx, MODEL))


def test_the_first_scene_opens_with_the_frame(user):
    scene = Scene(user)
    (first,) = PlayScene.objects.filter(frame=scene.frame)
    assert (first.number, first.status, first.opened_seq) == (1, "open", 0)


def test_the_gm_closes_a_scene_and_each_character_summarises_only_what_it_witnessed(
    user, queued, events
):
    scene = Scene(user)
    play(scene, "lights the lamp (EVERYONE-SAW)")
    play(scene, "pockets the key (ALICE-ONLY-MARKER)", witnesses=[scene.alice])
    gm = logged_in_client(user)
    url = f"/api/frames/{scene.frame.pk}/scenes"
    answer = gm.post(f"{url}/close", {"title": "The docks"}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["closed"]["closed_reason"] == "gm"
    assert answer.json()["opened"] == {**answer.json()["opened"], "number": 2, "title": "The docks"}
    assert queued and LLMCall.objects.filter(purpose="synthesis.scene").count() == 0  # queued
    summarise(queued)

    closed = PlayScene.objects.get(frame=scene.frame, number=1)
    assert closed.summary_status == "done", closed.summary_error
    own = {s.seat_id: s.text for s in SceneSummary.objects.filter(scene=closed)}
    assert "ALICE-ONLY-MARKER" in own[scene.alice.pk]
    assert "EVERYONE-SAW" in own[scene.bob.pk]
    assert "ALICE-ONLY-MARKER" not in own[scene.bob.pk] + own[scene.tony.pk]
    # The public summary: what everyone saw, no secret.
    assert "EVERYONE-SAW" in closed.summary and "ALICE-ONLY-MARKER" not in closed.summary
    everything = str(closed.tries) + closed.summary + "".join(own.values())
    assert not any(secret in everything for secret in SECRETS)
    # Edge summaries, each the source's own view.
    assert "lights the lamp" in Edge.objects.get(source=scene.bob, target=scene.alice).summary
    # Counted against the frame's budget like every call of its model.
    calls = LLMCall.objects.filter(purpose="synthesis.scene")
    assert calls.count() == 4 and {c.subject for c in calls} == {f"scene:{closed.pk}"}
    listed = gm.get(f"/api/frames/{scene.frame.pk}/calls").json()["calls"]  # diagnostics
    assert [c["label"] for c in listed].count("Summarising a scene") == 4

    # Events: the scene's public body to everyone; each player's summary to them and the GM.
    kinds = [(g, e["type"]) for g, e in events if e["type"].startswith("scene.")]
    frame_group = f"frame.{scene.frame.pk}"
    assert (frame_group, "scene.closed") in kinds and (frame_group, "scene.opened") in kinds
    summarized = {g: e for g, e in events if e["type"] == "scene.summarized"}
    alice_group = f"frame.{scene.frame.pk}.seat.{scene.alice.pk}"
    bob_group = f"frame.{scene.frame.pk}.seat.{scene.bob.pk}"
    assert "ALICE-ONLY-MARKER" in summarized[alice_group]["summary"]
    assert "ALICE-ONLY-MARKER" not in str(summarized[bob_group])
    assert set(summarized[f"frame.{scene.frame.pk}.gm"]["summaries"]) == {
        str(s.pk) for s in (scene.alice, scene.bob, scene.tony)
    }
    assert not any(e["type"] == "scene.summarized" for g, e in events if g == frame_group)

    # The list: a player reads their own summary only; the GM every one.
    bob = logged_in_client(scene.bob_player).get(url).json()["scenes"]
    assert [s["number"] for s in bob] == [1, 2]
    assert [x["seat"] for x in bob[0]["summaries"]] == [str(scene.bob.pk)]
    assert "ALICE-ONLY-MARKER" not in str(bob) and "summary_error" not in bob[0]
    every = gm.get(url).json()["scenes"][0]["summaries"]
    assert len(every) == 3 and "ALICE-ONLY-MARKER" in str(every)


def test_closing_is_the_gms_and_needs_something_to_have_happened(user):
    scene = Scene(user)
    url = f"/api/frames/{scene.frame.pk}/scenes/close"
    player = logged_in_client(scene.alice_player).post(url, {}, format="json")
    assert player.status_code == 403
    empty = logged_in_client(user).post(url, {}, format="json")
    assert empty.status_code == 409 and "Nothing has happened" in empty.json()["detail"]
    play(scene, "waves")
    long = logged_in_client(user).post(url, {"title": "x" * 200}, format="json")
    assert long.status_code == 400
    assert PlayScene.objects.filter(frame=scene.frame).count() == 1


def test_an_outcome_stating_a_new_place_closes_the_scene_and_names_the_next(user, queued):
    scene = Scene(user)
    first = play(scene, "steps onto the pier", location="The harbour")
    assert scene_after_outcome(outcome_id=first.pk) is None  # the scene's first place
    assert PlayScene.objects.get(frame=scene.frame, number=1).location == "The harbour"
    same = play(scene, "looks at the boats", location="the  harbour")
    assert scene_after_outcome(outcome_id=same.pk) is None
    moved = play(scene, "walks into the tavern", location="The Rusty Anchor")
    closed = scene_after_outcome(outcome_id=moved.pk)
    assert (closed.closed_reason, closed.closed_seq) == ("location", moved.seq)
    opened = PlayScene.objects.get(frame=scene.frame, status="open")
    assert (opened.number, opened.title, opened.location) == (
        2,
        "The Rusty Anchor",
        "The Rusty Anchor",
    )
    assert scene_after_outcome(outcome_id=moved.pk) is None  # a redelivered check: nothing
    assert queued == [closed.pk]


def test_an_outcome_after_a_long_pause_opens_a_new_scene(user, settings):
    settings.LMIX_SCENE_PAUSE_MINUTES = 30
    scene = Scene(user)
    before = play(scene, "sits down")
    Outcome.objects.filter(pk=before.pk).update(created_at=before.created_at - timedelta(hours=2))
    after = play(scene, "stands up")
    closed = scene_after_outcome(outcome_id=after.pk)
    assert (closed.closed_reason, closed.closed_seq) == ("pause", before.seq)
    assert PlayScene.objects.get(frame=scene.frame, status="open").opened_seq == before.seq
    soon = play(scene, "stretches")
    assert scene_after_outcome(outcome_id=soon.pk) is None


def test_the_bones_answer_may_state_a_place_and_older_answers_still_validate():
    assert Bones.model_validate({"actions_resolved": []}).location == ""
    assert Bones.model_validate({"actions_resolved": [], "location": "Docks"}).location == "Docks"


def test_a_place_the_bones_state_is_stored_with_the_outcome_flattened(user):
    from synthesis.medium import bones_apply

    scene = Scene(user)
    ctx = medium.gather(scene.fire(scene.alice, scene.commit(scene.alice, "I walk out.")))
    answer = Bones.model_validate(
        {
            "actions_resolved": [{"seat": "Alice", "action": "walks out", "result": "success"}],
            "location": "  The\n  docks ",
        }
    )
    assert bones_apply(answer, ctx).location == "The docks"


def test_the_bones_wire_offers_a_place_without_requiring_one(user):
    scene = Scene(user)
    ctx = medium.gather(scene.fire(scene.alice, scene.commit(scene.alice, "I go.")))
    wire = bones_wire(ctx)
    assert "location" in wire["properties"] and "location" not in wire.get("required", [])


def test_prompts_carry_older_scenes_as_summaries_and_stay_the_same_size(user, queued):
    """Six scenes of similar play: the prompts of scene 4 and scene 8 (each with the
    newest three older scenes' summaries) are the same size, and an old scene's outcome
    leaves every prompt once its summary is out of the window."""
    scene = Scene(user)
    sizes: dict[int, tuple[int, int]] = {}
    prompts: dict[int, tuple[str, str]] = {}
    for number in range(1, 9):
        for turn in range(4):
            play(scene, f"searches crate {turn} of the hold (SCENE-{number}-MARKER)")
        flesh, bones = flesh_prompt(scene, scene.alice), bones_prompt(scene, scene.bob)
        prompts[number] = (flesh, bones)
        sizes[number] = (len(flesh), len(bones))
        scene_close(frame=scene.frame, reason="gm", next_title=f"Hold {number + 1}")
        summarise(queued)
    # Scene 2 carries one older summary; from scene 4 on, three: then flat.
    assert abs(sizes[8][0] - sizes[4][0]) < 40 and abs(sizes[8][1] - sizes[4][1]) < 40
    assert sizes[6][0] - sizes[2][0] < 2 * 1000  # two more summaries, nothing else
    flesh, bones = prompts[6]
    assert "EARLIER SCENES" in flesh and "EARLIER SCENES" in bones
    for old in ("SCENE-1-MARKER", "SCENE-2-MARKER"):
        assert old not in flesh and old not in bones
    for summarised in ("SCENE-3-MARKER", "SCENE-5-MARKER"):
        assert summarised in flesh and summarised in bones  # by their summaries
    assert flesh.count("SCENE-6-MARKER") == 4  # the open scene's own outcomes


def test_a_characters_prompt_holds_only_its_own_summaries_and_the_public_prompt_no_ones(
    user, queued
):
    scene = Scene(user)
    play(scene, "hides the letter (ALICE-ONLY-MARKER)", witnesses=[scene.alice])
    play(scene, "opens the window")
    scene_close(frame=scene.frame, reason="gm")
    summarise(queued)
    assert "ALICE-ONLY-MARKER" in flesh_prompt(scene, scene.alice)
    assert "ALICE-ONLY-MARKER" not in flesh_prompt(scene, scene.bob)
    bones = bones_prompt(scene, scene.alice)
    assert "opens the window" in bones and "ALICE-ONLY-MARKER" not in bones


def test_a_failed_summary_is_the_gms_to_read_and_retry(user, queued, monkeypatch):
    from lmix.llm.base import LLMError

    scene = Scene(user)
    play(scene, "waves")
    scene_close(frame=scene.frame, reason="gm")

    def broken(**kwargs):
        raise LLMError("the provider said no (PROVIDER-DETAIL)")

    monkeypatch.setattr(scene_run, "llm_structured", broken)
    summarise(queued)
    failed = PlayScene.objects.get(frame=scene.frame, number=1)
    assert failed.summary_status == "failed" and "PROVIDER-DETAIL" in failed.summary_error
    url = f"/api/frames/{scene.frame.pk}/scenes"
    assert "PROVIDER-DETAIL" not in str(logged_in_client(scene.alice_player).get(url).json())
    assert "PROVIDER-DETAIL" in str(logged_in_client(user).get(url).json())
    monkeypatch.undo()
    monkeypatch.setattr(services, "scene_summary_enqueue", queued.append)
    monkeypatch.setattr(scene_run, "scene_summary_enqueue", queued.append)
    assert logged_in_client(scene.alice_player).post(f"{url}/1/retry").status_code == 403
    assert logged_in_client(user).post(f"{url}/1/retry").status_code == 202
    assert logged_in_client(user).post(f"{url}/1/retry").status_code == 409  # pending now
    summarise(queued)
    assert PlayScene.objects.get(pk=failed.pk).summary_status == "done"
    assert scene_summary_run(scene_id=failed.pk) is None  # done once, whatever redelivers


def test_over_the_budget_the_summary_fails_with_that_reason(user, queued, monkeypatch):
    scene = Scene(user)
    play(scene, "waves")
    scene_close(frame=scene.frame, reason="gm")
    monkeypatch.setattr(scene_run, "budget_admits", lambda **kwargs: False)
    summarise(queued)
    failed = PlayScene.objects.get(frame=scene.frame, number=1)
    assert failed.summary_status == "failed" and "budget" in failed.summary_error
    assert not LLMCall.objects.filter(purpose="synthesis.scene").exists()


def test_a_pass_whose_outcome_moves_the_characters_closes_the_scene_through_its_task(
    user, queued, monkeypatch
):
    """The wiring end to end: a medium pass's outcome states a place (the offline narrator
    told to), its queued check runs, and the second place closes scene 1."""
    from unittest import mock

    from synthesis import tasks
    from tests.synthesis.conftest import run

    places = iter(["The harbour", "The Rusty Anchor"])
    offline = Bones.offline_answer.__func__

    def moving(cls, actions, variant=0):
        return offline(cls, actions, variant).model_copy(update={"location": next(places)})

    monkeypatch.setattr(Bones, "offline_answer", classmethod(moving))
    scene = Scene(user)
    with mock.patch.object(
        tasks.scene_check_task, "delay", side_effect=lambda oid: tasks.scene_check_task(oid)
    ):
        run(scene.fire(scene.alice, scene.commit(scene.alice, "I walk to the pier.")))
        run(scene.fire(scene.alice, scene.commit(scene.alice, "I go into the tavern.", after=5)))
    first, second = PlayScene.objects.filter(frame=scene.frame).order_by("number")
    assert (first.status, first.closed_reason, first.location) == (
        "closed",
        "location",
        "The harbour",
    )
    assert (second.status, second.title) == ("open", "The Rusty Anchor")
    assert Outcome.objects.filter(frame=scene.frame, location="The Rusty Anchor").exists()
    assert queued == [first.pk]


def test_the_sweep_sends_a_lost_summary_again_and_fails_a_dead_workers_run(user, monkeypatch):
    sent: list = []
    monkeypatch.setattr(services, "scene_summary_enqueue", lambda pk: None)  # lost
    monkeypatch.setattr(scene_run, "scene_summary_enqueue", sent.append)
    scene = Scene(user)
    play(scene, "waves")
    lost, _ = scene_close(frame=scene.frame, reason="gm")
    swept = scene_run.scene_summaries_sweep
    assert swept()["requeued"] == 0  # not lost yet: its task may be on its way
    old = lost.updated_at - timedelta(seconds=settings.LMIX_PENDING_REQUEUE_SECONDS + 1)
    PlayScene.objects.filter(pk=lost.pk).update(updated_at=old)
    assert swept()["requeued"] == 1 and sent == [lost.pk]
    assert swept()["requeued"] == 0  # once per interval
    # A run whose worker died, on its last run: failed, for the GM's retry.
    dead = lost.updated_at - timedelta(seconds=settings.LMIX_LEASE_TIMEOUT_SECONDS + 1)
    PlayScene.objects.filter(pk=lost.pk).update(
        summary_status="running",
        lease_owner="dead:1:x",
        heartbeat_at=dead,
        attempts=settings.LMIX_LEASE_MAX_RESTARTS + 1,
    )
    assert swept()["failed"] == 1
    failed = PlayScene.objects.get(pk=lost.pk)
    assert failed.summary_status == "failed" and "stopped" in failed.summary_error


def test_closing_the_frame_for_good_closes_its_last_scene_and_summarises_it(user, queued):
    scene = Scene(user)
    play(scene, "blows out the lamp")
    gm = logged_in_client(user)
    assert gm.post(f"/api/frames/{scene.frame.pk}/close", {}, format="json").status_code == 200
    (last,) = PlayScene.objects.filter(frame=scene.frame)
    assert (last.status, last.closed_reason, last.summary_status) == ("closed", "gm", "pending")
    assert queued == [last.pk]
    summarise(queued)
    scenes = gm.get(f"/api/frames/{scene.frame.pk}/scenes").json()["scenes"]
    assert [(s["number"], s["status"], len(s["summaries"])) for s in scenes] == [(1, "closed", 3)]
    again = gm.post(f"/api/frames/{scene.frame.pk}/scenes/close", {}, format="json")
    assert again.status_code == 409


def test_closing_a_frame_where_nothing_happened_leaves_its_scene_as_it_was(user, queued):
    scene = Scene(user)
    closing = logged_in_client(user).post(f"/api/frames/{scene.frame.pk}/close", {}, format="json")
    assert closing.status_code == 200
    assert list(PlayScene.objects.filter(frame=scene.frame).values_list("status", flat=True)) == [
        "open"
    ]
    assert queued == []


# ---- rewind × scenes (synthesis/rewind.py) ----

PLANTED = "HIDDEN-SUMMARY-MARKER-7007"


def scene_rows(frame) -> dict:
    """Every visible scene and summary, the edges' summaries and the frame's scene start."""

    return {
        "scenes": list(PlayScene.objects.filter(frame=frame).order_by("number").values()),
        "summaries": sorted(
            SceneSummary.objects.filter(frame=frame).values_list(
                "pk", "scene_id", "seat_id", "text"
            )
        ),
        "edges": sorted(
            (str(s), str(t), text)
            for s, t, text in Edge.objects.filter(frame_id=frame.pk).values_list(
                "source_id", "target_id", "summary"
            )
        ),
        "frame": Frame.objects.filter(pk=frame.pk).values("scene_seq", "scene_at")[0],
    }


def closed_then_played(user, queued) -> tuple[Scene, list[Outcome]]:
    """Two outcomes, the GM closes scene 1 (its summaries planted with a marker), a third
    outcome in scene 2."""
    scene = Scene(user)
    first = play(scene, "lights the lamp (KEPT-SCENE-MARKER)")
    second = play(scene, "pockets the key")
    gm = logged_in_client(user)
    url = f"/api/frames/{scene.frame.pk}/scenes/close"
    closed = gm.post(url, {"title": "The docks"}, format="json")
    assert closed.status_code == 200, closed.content
    summarise(queued)
    one = PlayScene.objects.get(frame=scene.frame, number=1)
    assert one.summary_status == "done"
    PlayScene.objects.filter(pk=one.pk).update(summary=f"{one.summary} {PLANTED}")
    for row in SceneSummary.objects.filter(scene=one):
        SceneSummary.objects.filter(pk=row.pk).update(text=f"{row.text} {PLANTED}")
    Edge.objects.filter(frame_id=scene.frame.pk).exclude(summary="").update(summary=PLANTED)
    assert Edge.objects.filter(summary=PLANTED).exists()
    third = play(scene, "walks along the quay")
    return scene, [first, second, third]


def test_a_rewind_hides_later_scenes_reopens_the_one_it_lands_in_and_restore_gives_all_back(
    user, queued
):
    scene, (first, second, _) = closed_then_played(user, queued)
    assert PLANTED in flesh_prompt(scene, scene.alice)  # its summary, before the rewind
    before = scene_rows(scene.frame)
    # The dry runs (a rewind's, a regenerate's) say so first.
    for preview in (
        rewind_preview(frame=scene.frame, to=first.pk),
        regenerate_preview(outcome=second),
    ):
        assert preview["counts"] | {"scenes": 1, "scenes_reopened": 1} == preview["counts"]
    assert scene_rows(scene.frame) == before

    rewind = frame_rewind(frame=scene.frame, to=first.pk, user=user)

    # Scene 2 and its divider are gone (kept, hidden); scene 1 is open again, empty of
    # summaries; the frame's scene starts at scene 1 again.
    (one,) = PlayScene.objects.filter(frame=scene.frame)
    assert (one.number, one.status, one.closed_seq, one.summary_status) == (1, "open", None, "none")
    assert one.summary == "" and not SceneSummary.objects.filter(frame=scene.frame).exists()
    assert PlayScene.all_objects.get(frame=scene.frame, number=2).rewound == rewind
    assert SceneSummary.all_objects.filter(rewound=rewind).count() == 3
    scene.frame.refresh_from_db()
    assert (scene.frame.scene_seq, scene.frame.scene_at) == (0, None)
    assert rewind.counts["scenes"] == 1 and rewind.counts["scenes_reopened"] == 1
    assert not Edge.objects.filter(summary=PLANTED).exists()  # as of a scene now open

    # The planted summary is in no prompt, no API answer, no export or state answer.
    flesh, bones = flesh_prompt(scene, scene.alice), bones_prompt(scene, scene.bob)
    assert "- Scene 1" not in flesh and "- Scene 1" not in bones  # no summary of it
    assert "KEPT-SCENE-MARKER" in flesh  # outcome 1 is the open scene's again
    for prompt in (flesh, bones, flesh_prompt(scene, scene.bob)):
        assert PLANTED not in prompt and "pockets the key" not in prompt
    url = f"/api/frames/{scene.frame.pk}/scenes"
    for who in (user, scene.alice_player, scene.bob_player):
        listed = logged_in_client(who).get(url).json()["scenes"]
        assert [s["number"] for s in listed] == [1] and PLANTED not in str(listed)
        frame = logged_in_client(who).get(f"/api/frames/{scene.frame.pk}").json()
        assert PLANTED not in str(frame)
    assert PLANTED not in str(views(scene))

    rewind_restore(rewind=rewind, user=user)

    assert scene_rows(scene.frame) == before
    assert PLANTED in flesh_prompt(scene, scene.alice)


def test_a_scene_closed_again_after_a_rewind_goes_when_the_rewind_is_restored(user, queued):
    """After the rewind the GM closes scene 1 again (no new outcome): a new scene 2 opens;
    restoring hides those (a restore rewind) and gives back the first ones exactly."""
    scene, (first, _, _) = closed_then_played(user, queued)
    before = scene_rows(scene.frame)
    rewind = frame_rewind(frame=scene.frame, to=first.pk, user=user)
    closed, opened = scene_close(frame=scene.frame, reason="gm", next_title="The cellar")
    summarise(queued)
    assert (closed.number, opened.number) == (1, 2)
    assert SceneSummary.objects.filter(scene=closed).count() == 3

    rewind_restore(rewind=rewind, user=user)

    assert scene_rows(scene.frame) == before
    since = Rewind.objects.get(kind="restore")
    assert PlayScene.all_objects.get(pk=opened.pk).rewound == since
    assert SceneSummary.all_objects.filter(rewound=since).count() == 3
    # And that restore rewind is itself restorable: the cellar comes back.
    rewind_restore(rewind=since, user=user)
    titles = list(PlayScene.objects.filter(frame=scene.frame).values_list("number", "title"))
    assert titles == [(1, ""), (2, "The cellar")]


def test_a_frame_with_hidden_scenes_is_deleted_whole(user, queued):
    scene, (first, _, _) = closed_then_played(user, queued)
    frame_rewind(frame=scene.frame, to=first.pk, user=user)
    assert PlayScene.all_objects.filter(rewound__isnull=False).exists()
    scene.frame.delete()
    assert not PlayScene.all_objects.exists() and not SceneSummary.all_objects.exists()
    assert not Rewind.objects.exists()
