"""Liquid over REST with a real worker: submitted, analysed by the soft pass (heuristics
when the model fails), revised, withdrawn, committed; only a seat's player (or the GM for
an AI seat) writes for it, and others read its text only as the frame allows."""

import pytest

from lmix.models import LLMModel
from synthesis.events import liquid_audiences
from synthesis.models import Frame, Liquid, Pass
from synthesis.soft import SoftAnalysis, heuristics, soft_result_store
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.synthesis.conftest import make_frame, seat_player
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def analysed(liquid_id) -> Liquid | None:
    return Liquid.objects.filter(pk=liquid_id).exclude(analysis_source="").first()


def submit(client, frame, seat, content="I search the desk for the letter."):
    return client.post(
        f"/api/frames/{frame.id}/liquid", {"seat": str(seat.id), "content": content}, format="json"
    )


def test_a_submission_is_analysed_by_the_soft_model(user):
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    bob_name = frame.seats.get(position=1).persona.name
    response = submit(alice, frame, seat, f"I shove {bob_name} against the wall!")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "submitted" and body["content"].startswith("I shove")
    liquid = wait_for(lambda: analysed(body["id"]))
    assert liquid.analysis_source == "model"  # the offline narrator is a model too
    assert liquid.pscale == -3 and liquid.interruptive
    assert liquid.targets == [str(frame.seats.get(position=1).id)]
    soft = Pass.objects.get(liquid=liquid)
    assert soft.kind == "soft" and soft.status == "done"
    assert "ACTION: I shove" in soft.messages[0]["messages"][-1]["content"]


def test_when_the_soft_model_fails_heuristics_decide_and_say_so(user):
    with FakeLLMServer() as server:
        server.responder = lambda request: Reply(status=500)
        model = LLMModel.objects.create(
            owner=user,
            name="Broken",
            provider="openai_compatible",
            api_endpoint=server.base_url,
            model_id="broken",
        )
        frame = make_frame(user, soft_model=model)
        _, alice = seat_player(frame, 0)
        body = submit(alice, frame, frame.seats.get(position=0), "I wait for an hour.").json()
        liquid = wait_for(lambda: analysed(body["id"]), timeout=60)
    assert liquid.analysis_source == "heuristic" and "heuristics decided" in liquid.analysis_note
    assert liquid.pscale == 1 and liquid.refined == "I wait for an hour."


def test_only_a_seats_player_writes_for_it_and_the_gm_for_ai_seats(api, user, other_api):
    frame = make_frame(user, open_seats=2)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    alice_seat, ai_seat = frame.seats.get(position=0), frame.seats.get(position=2)
    assert submit(bob, frame, alice_seat).status_code == 403
    assert submit(other_api, frame, alice_seat).status_code == 404  # not in the frame
    assert submit(api, frame, alice_seat).status_code == 403  # the GM, for a human seat
    assert submit(alice, frame, ai_seat).status_code == 403
    assert submit(api, frame, ai_seat).status_code == 201
    assert Liquid.objects.count() == 1


def test_revise_withdraw_and_commit(user):
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    liquid_id = submit(alice, frame, seat).json()["id"]
    edited = alice.patch(f"/api/liquid/{liquid_id}", {"content": "I read it."}, format="json")
    assert edited.status_code == 200 and edited.json()["revision"] == 2
    committed = alice.post(f"/api/liquid/{liquid_id}/commit")
    assert committed.status_code == 200 and committed.json()["status"] == "committed"
    late = alice.patch(f"/api/liquid/{liquid_id}", {"content": "No."}, format="json")
    assert late.status_code == 409 and "committed" in late.json()["detail"]
    assert alice.delete(f"/api/liquid/{liquid_id}").status_code == 409
    other_id = submit(alice, frame, seat, "I leave.").json()["id"]
    assert alice.delete(f"/api/liquid/{other_id}").status_code == 204
    assert Liquid.objects.get(pk=other_id).status == "withdrawn"
    assert Liquid.objects.get(pk=liquid_id).window is not None


def test_an_analysis_of_an_older_revision_is_dropped(user):
    frame = make_frame(user)
    _, alice = seat_player(frame, 0)
    liquid_id = submit(alice, frame, frame.seats.get(position=0), "I run.").json()["id"]
    wait_for(lambda: analysed(liquid_id))
    old_pass = Pass.objects.get(liquid_id=liquid_id)
    alice.patch(f"/api/liquid/{liquid_id}", {"content": "I sleep for hours."}, format="json")
    Pass.objects.filter(pk=old_pass.pk).update(status="running")
    stale = SoftAnalysis(
        pscale=-3, window_seconds=4, interruptive=True, capable=True, refined="STALE"
    )
    stored = soft_result_store(pass_=old_pass, analysis=stale, source="model", note="", seats=[])
    assert not stored
    liquid = wait_for(lambda: Liquid.objects.filter(pk=liquid_id, pscale=1).first())
    assert liquid.refined != "STALE"


def test_other_players_read_liquid_text_only_when_the_frame_shows_it(user):
    frame = make_frame(user, open_seats=2, liquid_visibility="own")
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    submit(alice, frame, frame.seats.get(position=0), "ALICE-INTENT-MARKER")
    bobs_view = bob.get(f"/api/frames/{frame.id}").json()["liquid"]
    assert len(bobs_view) == 1 and "content" not in bobs_view[0]
    assert "ALICE-INTENT-MARKER" not in bob.get(f"/api/frames/{frame.id}").content.decode()
    assert alice.get(f"/api/frames/{frame.id}").json()["liquid"][0]["content"]
    Frame.objects.filter(pk=frame.pk).update(liquid_visibility="all")
    assert bob.get(f"/api/frames/{frame.id}").json()["liquid"][0]["content"]


@pytest.mark.parametrize("visibility", ["all", "own", "gm"])
def test_liquid_events_carry_text_only_to_those_who_may_read_it(user, visibility):
    frame = make_frame(user, open_seats=2, liquid_visibility=visibility)
    seat_player(frame, 0)
    seat_player(frame, 1)
    seats = list(frame.seats.order_by("position"))
    liquid = Liquid.objects.create(frame=frame, seat=seats[0], content="MARKER")
    audiences = liquid_audiences("liquid.created", liquid, frame=frame, seats=seats)
    assert all(a["liquid"]["id"] == str(liquid.id) for a in audiences.values())
    if visibility == "all":  # the same body for everyone: once, to the whole frame
        assert audiences == {f"frame.{frame.id}": audiences[f"frame.{frame.id}"]}
        assert audiences[f"frame.{frame.id}"]["liquid"]["content"] == "MARKER"
        return
    gm, own, other = (
        f"frame.{frame.id}.gm",
        f"frame.{frame.id}.seat.{seats[0].id}",
        f"frame.{frame.id}.seat.{seats[1].id}",
    )
    assert set(audiences) == {gm, own, other}  # the AI seat has no sockets to reach
    assert audiences[gm]["liquid"]["content"] == audiences[own]["liquid"]["content"] == "MARKER"
    assert "content" not in audiences[other]["liquid"]
    assert "refined" not in audiences[other]["liquid"]


def test_the_heuristics_read_time_scale_and_targets_from_the_words():
    seats = {"Bob Wilson": "b", "Tony Rosetti": "t"}
    assert heuristics("I punch Bob in the face", seats).targets == ["b"]
    assert heuristics("I punch Bob in the face", seats).pscale == -3
    assert heuristics("We travel for days to the coast", seats).pscale == 2
    assert not heuristics("I look around the quiet room slowly", seats).interruptive
