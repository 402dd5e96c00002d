"""The realtime contract of frames: a client that takes a snapshot (`GET /api/frames/{id}`)
at any point and then applies every event its socket receives (dropping those its snapshot
already holds, by `seq`) ends up equal to a fresh snapshot — for a player, whose view hides
others' liquid, and for the GM, who sees everything. Through real sockets, the real worker
and the offline narrator; `seq` arrives without gaps.

The run is recorded (every reader's snapshots and events, as received) in FIXTURE, which
the frontend replays through its real store (`frontend/src/lib/frame-sync.spec.ts`). Each
run checks that what it heard is the events' contract; `LMIX_RECORD_FRAME_SYNC=1` writes
the fixture again (after an event or the store changed)."""

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async

from synthesis.event_types import FRAME_EVENTS
from synthesis.models import Frame, Pass, Window
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import make_frame, seat_player
from tests.synthesis.test_frame_socket import frame_socket, ready
from tests.synthesis.test_scene import ai_work, brisk_worker  # noqa: F401 (fixtures)
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("brisk_worker")]

FIXTURE = Path(__file__).resolve().parents[2] / "frontend/src/lib/fixtures/frame-sync.json"
EVENT_MODELS = {t: m for m in FRAME_EVENTS for t in m.model_fields["type"].annotation.__args__}


class Reader:
    """One person in the frame: their API client, their socket, everything it received,
    and the snapshots they took along the way."""

    def __init__(self, name: str, client) -> None:
        self.name = name
        self.client = client
        self.events: list[dict[str, Any]] = []
        self.snapshots: list[dict[str, Any]] = []

    async def connect(self, frame_id) -> None:
        self.socket = await ready(frame_socket(frame_id, self.client))
        self.listening = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        while True:  # cancelled at the end (a receive that times out would end the socket)
            self.events.append(await self.socket.receive_json_from(timeout=600))

    async def snapshot(self, frame_id) -> dict[str, Any]:
        view = await database_sync_to_async(self._get)(frame_id)
        self.snapshots.append(view)
        return view

    def _get(self, frame_id) -> dict[str, Any]:
        response = self.client.get(f"/api/frames/{frame_id}")
        assert response.status_code == 200
        return response.json()

    def numbered(self) -> list[int]:
        return [event["seq"] for event in self.events if "seq" in event]

    async def close(self) -> None:
        self.listening.cancel()
        await self.socket.disconnect()


@database_sync_to_async
def scene():
    """A frame where Alice and Bob play and Tony is an assistant's; each player reads only
    their own liquid's text."""
    gm = UserFactory()
    frame = make_frame(gm, open_seats=2, tempo=0.05, liquid_visibility="own")
    _, alice = seat_player(frame, 0)
    _, bob = seat_player(frame, 1)
    seats = {str(s.persona.name.split()[0]).lower(): s for s in frame.seats.all()}
    tony = seats["tony"]
    return frame, seats, logged_in_client(gm), alice, bob, str(tony.assistant_id)


def in_seq_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The numbered events by seq, then the rest (narrative streams) as they came: what a
    client holds once it re-read after an out-of-order arrival."""
    numbered = sorted((e for e in events if "seq" in e), key=lambda e: e["seq"])
    return numbered + [e for e in events if "seq" not in e]


def call(client, method: str, path: str, data: dict | None = None) -> dict:
    response = getattr(client, method)(path, data, format="json")
    assert response.status_code < 300, response.content
    return response.json() if response.content else {}


def quiet(frame, ai: dict) -> bool:
    """Nothing under way: no pass pending or running, no window firing or counting down,
    no AI action enqueued and not yet taken (a frozen window may stay open)."""
    return not (
        Pass.objects.filter(frame=frame, status__in=["pending", "running"]).exists()
        or Window.objects.filter(frame=frame, status="firing").exists()
        or Window.objects.filter(frame=frame, status="open", expires_at__isnull=False).exists()
        or ai["enqueued"] != ai["ran"]
    )


async def test_a_snapshot_plus_the_events_after_it_equals_a_fresh_snapshot(ai_work):  # noqa: F811
    frame, seats, gm, alice, bob, tony_assistant = await scene()
    readers = [Reader("gm", gm), Reader("alice", alice), Reader("bob", bob)]
    for reader in readers:
        await reader.connect(frame.id)

    async def snapshots() -> None:
        for reader in readers:
            await reader.snapshot(frame.id)

    async def act(client, method: str, path: str, data: dict | None = None) -> dict:
        return await database_sync_to_async(call)(client, method, path, data)

    async def settle() -> None:
        await database_sync_to_async(wait_for)(lambda: quiet(frame, ai_work), 60)

    liquid_url = f"/api/frames/{frame.id}/liquid"
    alice_seat, bob_seat, tony_seat = (str(seats[n].id) for n in ("alice", "bob", "tony"))
    await snapshots()  # before anything happened

    # Round one: an intention revised, another withdrawn, both committed; the GM pauses,
    # resumes, and takes Tony from his assistant and gives him back.
    await act(bob, "post", f"/api/frames/{frame.id}/talk", {"text": "Ready when you are."})
    mine = await act(alice, "post", liquid_url, {"seat": alice_seat, "content": "I wave."})
    await act(alice, "patch", f"/api/liquid/{mine['id']}", {"content": "I stab at Bob."})
    await act(alice, "post", f"/api/liquid/{mine['id']}/commit")
    hidden = await act(bob, "post", liquid_url, {"seat": bob_seat, "content": "I hide."})
    await act(bob, "delete", f"/api/liquid/{hidden['id']}")
    shove = await act(bob, "post", liquid_url, {"seat": bob_seat, "content": "I shove Alice."})
    await act(bob, "post", f"/api/liquid/{shove['id']}/commit")
    await snapshots()  # windows open, analyses arriving
    await act(gm, "post", f"/api/frames/{frame.id}/pause")
    await snapshots()
    await act(gm, "post", f"/api/frames/{frame.id}/resume")
    seat_url = f"/api/frames/{frame.id}/seats/{tony_seat}"
    await act(gm, "patch", seat_url, {"controller": "open"})
    await act(gm, "patch", seat_url, {"controller": "ai", "assistant": tony_assistant})
    await settle()
    await snapshots()  # between rounds

    # Round two: Alice grabs Tony (an interrupt his assistant answers), Bob acts too.
    grab = await act(alice, "post", liquid_url, {"seat": alice_seat, "content": "I grab Tony."})
    await act(alice, "post", f"/api/liquid/{grab['id']}/commit")
    water = await act(bob, "post", liquid_url, {"seat": bob_seat, "content": "I drink water."})
    await act(bob, "post", f"/api/liquid/{water['id']}/commit")
    await snapshots()  # mid-round
    await settle()

    # The end leaves live state: a paused frame, a frozen window, intentions under way.
    await act(gm, "post", f"/api/frames/{frame.id}/pause")
    coins = await act(alice, "post", liquid_url, {"seat": alice_seat, "content": "I count."})
    await act(alice, "post", f"/api/liquid/{coins['id']}/commit")
    await act(bob, "post", liquid_url, {"seat": bob_seat, "content": "I whistle a tune."})
    await settle()

    final_seq = await database_sync_to_async(
        lambda: Frame.objects.values_list("seq", flat=True).get(pk=frame.id)
    )()
    for reader in readers:
        final = await reader.snapshot(frame.id)
        assert final["seq"] == final_seq  # nothing moves any more
        done = {n["id"] for n in final["narratives"] if n["status"] == "done"}

        def heard_everything(reader=reader, done=done) -> bool:
            told = {e["narrative"]["id"] for e in reader.events if e["type"] == "narrative.done"}
            return reader.numbered()[-1:] == [final_seq] and done <= told

        await asyncio.to_thread(wait_for, heard_everything, 30)
        # Every numbered event, once: nothing dropped, nothing repeated. Two writers (a
        # request and the worker) may publish in the other order than they committed; a
        # client takes that for a gap and re-reads, as the SPA does, so order by seq here.
        first = reader.snapshots[0]["seq"]
        assert sorted(reader.numbered()) == list(range(first + 1, final_seq + 1)), reader.name

        for event in reader.events:  # each as its model builds it: the contract
            assert EVENT_MODELS[event["type"]](**event).wire() == event

    # The player's view hides the other player's text; the GM's does not.
    final_views = {r.name: r.snapshots[-1] for r in readers}
    bobs = [x for x in final_views["alice"]["liquid"] if x["seat"] == bob_seat]
    assert bobs and all("content" not in x for x in bobs)
    assert all("content" in x for x in final_views["gm"]["liquid"])
    for reader in readers:
        await reader.close()
    if os.environ.get("LMIX_RECORD_FRAME_SYNC"):
        record(readers)


def record(readers: list["Reader"]) -> None:
    """Every reader's snapshots (the last one after everything) and its events, in the
    order a client holds them once it re-read after an out-of-order arrival."""
    log = {
        reader.name: {"snapshots": reader.snapshots, "events": in_seq_order(reader.events)}
        for reader in readers
    }
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(log, indent=1) + "\n")
