"""The whole loop as players meet it, through REST, a real worker and real sockets, on the
offline narrator (the seed's success criteria): two players commit; each gets a different
narrative; both rest on the same outcomes; each reflects its own character; commits
gather in a window; an interrupt wakes its target; other players never receive a
narrative that is not theirs."""

import pytest
from channels.db import database_sync_to_async

from lmix.models import LLMModel
from synthesis.models import Narrative, Outcome, Pass
from tests.factories import UserFactory
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.synthesis.conftest import make_frame, seat_player
from tests.synthesis.test_frame_socket import frame_socket, ready
from tests.waiting import receive_until, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def play(client, frame, seat, content: str) -> str:
    """Submit and commit, as a player does; returns the liquid id."""
    liquid = client.post(
        f"/api/frames/{frame.id}/liquid", {"seat": str(seat.id), "content": content}, format="json"
    ).json()
    assert client.post(f"/api/liquid/{liquid['id']}/commit").status_code == 200
    return liquid["id"]


@database_sync_to_async
def two_player_scene(tempo: float = 0.05):
    gm = UserFactory()
    frame = make_frame(gm, open_seats=2, tempo=tempo)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    seats = list(frame.seats.order_by("position"))
    return frame, seats, alice, bob


def narratives_of(frame):
    return list(Narrative.objects.filter(frame=frame, status="done").order_by("created_at"))


async def test_two_players_get_different_narratives_of_the_same_outcomes():
    frame, seats, alice, bob = await two_player_scene()
    alice_socket = await ready(frame_socket(frame.id, alice))
    bob_socket = await ready(frame_socket(frame.id, bob))
    await database_sync_to_async(play)(alice, frame, seats[0], 'I light the lamp. "Who is there?"')
    await database_sync_to_async(play)(bob, frame, seats[1], "I hide behind the curtain.")

    heard_by_alice = await receive_until(alice_socket, "narrative.done", timeout=60)
    done = await database_sync_to_async(wait_for)(
        lambda: len(narratives_of(frame)) >= 2 and narratives_of(frame), 60
    )
    alice_story = next(n for n in done if n.seat_id == seats[0].id)
    bob_story = next(n for n in done if n.seat_id == seats[1].id)
    assert alice_story.text != bob_story.text
    assert "Who is there?" in alice_story.text  # her own action, her exact words
    outcomes = await database_sync_to_async(lambda: list(Outcome.objects.filter(frame=frame)))()
    assert {str(o.id) for o in outcomes} >= set(alice_story.outcome_ids) | set(
        bob_story.outcome_ids
    )
    # Alice's socket streamed her narrative only; Bob's never carried a token of hers.
    tokens = [m for m in heard_by_alice if m["type"] == "narrative.token"]
    assert tokens and {m["seat"] for m in tokens} == {str(seats[0].id)}
    heard_by_bob = await receive_until(bob_socket, "narrative.done", timeout=60)
    assert {m["seat"] for m in heard_by_bob if m["type"] == "narrative.token"} == {str(seats[1].id)}
    assert alice_story.text not in str(heard_by_bob)
    outcome_events = [m for m in heard_by_alice if m["type"] == "outcome.created"]
    assert outcome_events and all("seq" in m for m in outcome_events)
    for communicator in (alice_socket, bob_socket):
        await communicator.disconnect()


def test_a_players_rest_view_holds_only_their_own_narratives(user):
    frame = make_frame(user, open_seats=2, tempo=0.05)
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    seats = list(frame.seats.order_by("position"))
    play(alice, frame, seats[0], "I open the window.")
    play(bob, frame, seats[1], "I sit down by the fire.")
    wait_for(lambda: len(narratives_of(frame)) >= 2, 60)
    alice_view = alice.get(f"/api/frames/{frame.id}").json()
    assert {n["seat"] for n in alice_view["narratives"]} == {str(seats[0].id)}
    gm_view = frame.owner and alice_view  # the GM's own view holds both
    from tests.conftest import logged_in_client

    gm_view = logged_in_client(frame.owner).get(f"/api/frames/{frame.id}").json()
    assert {n["seat"] for n in gm_view["narratives"]} >= {str(seats[0].id), str(seats[1].id)}
    assert alice_view["seq"] <= gm_view["seq"]


def test_commits_gather_in_one_window_and_are_narrated_once(user):
    frame = make_frame(user, open_seats=1, tempo=0.2)
    _, alice = seat_player(frame, 0)
    seat = frame.seats.get(position=0)
    first = play(alice, frame, seat, "I take the key.")
    second = play(alice, frame, seat, "I pocket the letter.")
    story = wait_for(lambda: narratives_of(frame), 60)[0]
    assert set(story.liquid_ids) == {first, second}
    assert Pass.objects.filter(frame=frame, kind="medium").count() == 1


def test_a_failed_pass_waits_visible_and_the_gm_retries_it(user, api):
    with FakeLLMServer() as server:
        server.responder = lambda request: Reply(status=500)
        broken = LLMModel.objects.create(
            owner=user,
            name="Broken",
            provider="openai_compatible",
            api_endpoint=server.base_url,
            model_id="broken",
        )
        frame = make_frame(user, open_seats=1, tempo=0.05, medium_model=broken)
        _, alice = seat_player(frame, 0)
        liquid_id = play(alice, frame, frame.seats.get(position=0), "I run for the door.")
        failed = wait_for(
            lambda: Pass.objects.filter(frame=frame, kind="medium", status="failed").first(), 60
        )
    view = alice.get(f"/api/frames/{frame.id}").json()
    assert [x["status"] for x in view["liquid"] if x["id"] == liquid_id] == ["committed"]
    assert [w["status"] for w in view["windows"]] == ["failed"]
    assert alice.post(f"/api/passes/{failed.id}/retry").status_code == 403
    frame.medium_model = LLMModel.objects.get(owner=user, provider="offline")
    frame.save()
    assert api.post(f"/api/passes/{failed.id}/retry").status_code == 202
    wait_for(lambda: narratives_of(frame), 60)
    assert api.post(f"/api/passes/{failed.id}/retry").status_code == 409  # done now
    passes = api.get(f"/api/frames/{frame.id}/passes").json()
    medium = [p for p in passes if p["kind"] == "medium"]
    assert medium[0]["status"] == "done" and medium[0]["messages"]
    assert any(call["error"] for call in medium[0]["calls"])  # the failed attempt shows
