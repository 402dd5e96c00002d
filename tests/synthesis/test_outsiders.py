"""A signed-in user who is neither the frame's GM nor seated in it gets a 404 for the frame,
for everything in it (liquid, windows, passes, seats, table talk, controls) and for its
socket; the answer is the one a frame or row that does not exist gets, so it tells them
nothing, and their attempts change nothing. Knowing the invite code lets one take an open
seat, nothing more."""

import uuid

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.urls import resolve

from synthesis import urls as synthesis_urls
from synthesis.models import (
    Content,
    Frame,
    Liquid,
    Memory,
    Outcome,
    Pass,
    Seat,
    Snapshot,
    StateDelta,
    TableTalk,
    Window,
)
from synthesis.scene_models import Scene as PlayScene
from tests.conftest import logged_in_client
from tests.factories import UserFactory
from tests.synthesis.conftest import Scene
from tests.synthesis.test_frame_socket import frame_socket

pytestmark = pytest.mark.django_db

# Every route of synthesis/urls.py that reaches into one frame, by its url name: the HTTP
# method, the path (from the ids of the scene's rows), the id a missing row replaces, and
# a body that would be valid for someone allowed to do it.
ENDPOINTS = {
    ("frame-detail", "get"): ("/api/frames/{frame}", "frame", None),
    ("frame-detail", "patch"): ("/api/frames/{frame}", "frame", {"name": "OUTSIDER-RENAMED"}),
    ("frame-leave", "post"): ("/api/frames/{frame}/leave", "frame", {"seat": "{alice}"}),
    ("seat-detail", "patch"): (
        "/api/frames/{frame}/seats/{alice}",
        "frame",
        {"controller": "open"},
    ),
    ("seat-sheet", "get"): ("/api/frames/{frame}/seats/{alice}/sheet", "frame", None),
    ("seat-state", "get"): ("/api/frames/{frame}/seats/{alice}/state", "frame", None),
    ("seat-state", "patch"): (
        "/api/frames/{frame}/seats/{alice}/state",
        "frame",
        {"mood": "angry", "fact": "OUTSIDER-FACT"},
    ),
    ("seat-memory", "patch"): (
        "/api/frames/{frame}/seats/{alice}/state/memories/{memory}",
        "frame",
        {"text": "OUTSIDER-MEMORY", "pinned": True},
    ),
    ("seat-snapshot", "get"): ("/api/frames/{frame}/seats/{alice}/snapshot", "frame", None),
    ("seat-reset", "post"): (
        "/api/frames/{frame}/seats/{alice}/reset",
        "frame",
        {"confirm": "Alice Thompson"},
    ),
    ("frame-snapshots", "get"): ("/api/frames/{frame}/snapshots", "frame", None),
    ("frame-snapshots", "post"): (
        "/api/frames/{frame}/snapshots",
        "frame",
        {"seat": "{alice}", "snapshot_id": "{snapshot}"},
    ),
    ("frame-snapshot", "get"): ("/api/frames/{frame}/snapshots/{snapshot}", "frame", None),
    ("frame-invite", "post"): ("/api/frames/{frame}/invite", "frame", None),
    ("frame-pause", "post"): ("/api/frames/{frame}/pause", "frame", None),
    ("frame-resume", "post"): ("/api/frames/{frame}/resume", "frame", None),
    ("frame-close", "post"): ("/api/frames/{frame}/close", "frame", {"epilogue": True}),
    ("frame-epilogue", "get"): ("/api/frames/{frame}/epilogue", "frame", None),
    ("frame-scenes", "get"): ("/api/frames/{frame}/scenes", "frame", None),
    ("frame-scene-close", "post"): (
        "/api/frames/{frame}/scenes/close",
        "frame",
        {"title": "OUTSIDER-SCENE"},
    ),
    ("frame-scene-retry", "post"): ("/api/frames/{frame}/scenes/1/retry", "frame", None),
    ("frame-advance", "post"): ("/api/frames/{frame}/advance", "frame", None),
    ("frame-passes", "get"): ("/api/frames/{frame}/passes", "frame", None),
    ("frame-budget", "get"): ("/api/frames/{frame}/budget", "frame", None),
    ("frame-calls", "get"): ("/api/frames/{frame}/calls", "frame", None),
    ("frame-export", "get"): ("/api/frames/{frame}/export", "frame", None),
    ("frame-liquid", "post"): (
        "/api/frames/{frame}/liquid",
        "frame",
        {"seat": "{alice}", "content": "OUTSIDER-WROTE-THIS"},
    ),
    ("frame-talk", "post"): ("/api/frames/{frame}/talk", "frame", {"text": "OUTSIDER-SAYS"}),
    ("frame-narration", "post"): (
        "/api/frames/{frame}/narration",
        "frame",
        {"text": "OUTSIDER-NARRATES"},
    ),
    ("frame-notes", "post"): (
        "/api/frames/{frame}/notes",
        "frame",
        {"seat": "{alice}", "text": "OUTSIDER-NOTE"},
    ),
    ("frame-content", "get"): ("/api/frames/{frame}/content", "frame", None),
    ("frame-content", "post"): (
        "/api/frames/{frame}/content",
        "frame",
        {"type": "location", "name": "OUTSIDER-PLACE", "data": {"description": "Here."}},
    ),
    # No content in the scene: the frame's id stands in for an entry's.
    ("content-detail", "patch"): (
        "/api/frames/{frame}/content/{frame}",
        "frame",
        {"name": "OUTSIDER-RENAMED"},
    ),
    ("frame-spectators", "post"): ("/api/frames/{frame}/spectators", "frame", {"enabled": True}),
    ("frame-bans", "get"): ("/api/frames/{frame}/bans", "frame", None),
    ("frame-ban-detail", "delete"): ("/api/frames/{frame}/bans/1", "frame", None),
    ("liquid-detail", "patch"): ("/api/liquid/{liquid}", "liquid", {"content": "HIJACKED"}),
    ("liquid-detail", "delete"): ("/api/liquid/{liquid}", "liquid", None),
    ("liquid-commit", "post"): ("/api/liquid/{liquid}/commit", "liquid", None),
    ("liquid-regenerate", "post"): ("/api/liquid/{liquid}/regenerate", "liquid", None),
    ("window-fire", "post"): ("/api/windows/{window}/fire", "window", None),
    ("window-cancel", "post"): ("/api/windows/{window}/cancel", "window", None),
    ("pass-retry", "post"): ("/api/passes/{failed_pass}/retry", "failed_pass", None),
    ("outcome-detail", "patch"): (
        "/api/outcomes/{outcome}",
        "outcome",
        {"world_facts": ["OUTSIDER-EDIT"]},
    ),
    ("outcome-release", "post"): ("/api/outcomes/{outcome}/release", "outcome", None),
    ("outcome-regenerate", "post"): ("/api/outcomes/{outcome}/regenerate", "outcome", None),
    ("pass-regenerate", "post"): ("/api/passes/{failed_pass}/regenerate", "failed_pass", None),
    ("frame-rewind", "post"): (
        "/api/frames/{frame}/rewind",
        "frame",
        {"to": "{outcome}", "dry_run": False},
    ),
    ("frame-rewinds", "get"): ("/api/frames/{frame}/rewinds", "frame", None),
    # No rewind in the scene: the 404 is the frame's, whatever the rewind's number.
    ("rewind-restore", "post"): ("/api/frames/{frame}/rewinds/1/restore", "frame", None),
}
# Routes of synthesis/urls.py that are not inside one frame: creating one from a
# production, the caller's list, and what an invite or spectator code opens.
NOT_FRAME_SCOPED = {
    "production-frames",
    # The cast's state: its owner's (tests/synthesis/test_production_state.py).
    "production-state",
    "frame-list",
    "frame-join",
    "frame-invite-preview",
    "spectate",
    # A skill belongs to a user or to a frame's GM (tests/synthesis/test_skills.py).
    "skill-list",
    "skill-detail",
    # The snapshot format's JSON Schema: public (synthesis/snapshots/).
    "snapshot-schema",
}
HANDLERS = ("get", "post", "put", "patch", "delete")


class Table(Scene):
    """The scene with something in every place an outsider might reach for: Alice's
    submitted intention, Bob's open window, a failed medium pass and an outcome held for
    the GM's review."""

    def __init__(self, gm) -> None:
        super().__init__(gm)
        self.liquid = self.submit(self.alice, "ALICE-INTENT")
        self.open_window = self.window(self.bob, status="open")
        self.failed_pass = Pass.objects.create(
            frame=self.frame,
            seat=self.tony,
            kind="medium",
            trigger="expiry",
            status="failed",
            window=self.window(self.tony, status="failed"),
        )
        self.outcome = Outcome.objects.create(
            frame=self.frame,
            seq=1,
            seat=self.alice,
            world_facts=["HELD-FACT"],
            flags=[{"kind": "internal_truth", "owner": "Bob", "excerpt": "x"}],
            held=True,
        )
        self.memory = Memory.objects.create(
            frame=self.frame, seat=self.alice, outcome=self.outcome, text="ALICE-REMEMBERS"
        )
        # A reset's snapshot of Alice, which restores her state (a second reset, say).
        self.snapshot = Snapshot.objects.create(
            frame=self.frame, seat=self.alice, kind="reset", data={"ALICE": "SNAPSHOT"}
        )
        self.ids = {
            "memory": str(self.memory.id),
            "snapshot": str(self.snapshot.id),
            "frame": str(self.frame.id),
            "outcome": str(self.outcome.id),
            "alice": str(self.alice.id),
            "liquid": str(self.liquid.id),
            "window": str(self.open_window.id),
            "failed_pass": str(self.failed_pass.id),
        }

    def state(self) -> dict:
        """Everything an outsider's request could have changed."""
        frame = Frame.objects.get(pk=self.frame.pk)
        return {
            "frame": (frame.status, frame.invite_code, frame.spectator_code, frame.seq),
            "seats": sorted(
                Seat.objects.filter(frame=frame).values_list(
                    "id", "controller", "user_id", "assistant_id"
                )
            ),
            "liquid": sorted(
                Liquid.objects.filter(frame=frame).values_list(
                    "id", "status", "content", "revision", "window_id"
                )
            ),
            "windows": sorted(
                Window.objects.filter(frame=frame).values_list("id", "status", "expires_at")
            ),
            "passes": sorted(Pass.objects.filter(frame=frame).values_list("id", "status")),
            "outcomes": sorted(
                Outcome.objects.filter(frame=frame).values_list(
                    "id", "held", "world_facts", "edited_at"
                )
            ),
            "talk": TableTalk.objects.filter(frame=frame).count(),
            "memories": sorted(
                Memory.objects.filter(frame=frame).values_list("id", "text", "pinned", "removed")
            ),
            "deltas": StateDelta.objects.filter(frame=frame).count(),
            "content": Content.objects.filter(frame=frame).count(),
            "scenes": sorted(
                PlayScene.objects.filter(frame=frame).values_list("number", "status", "title")
            ),
            "snapshots": Snapshot.objects.filter(frame=frame).count(),
        }


def fill(value, ids: dict):
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {key: fill(item, ids) for key, item in value.items()}
    return value


def call(client, method: str, path: str, body):
    if body is None:
        return getattr(client, method)(path)
    return getattr(client, method)(path, body, format="json")


def test_every_route_into_a_frame_is_checked_here():
    """A new frame-scoped endpoint must be added to ENDPOINTS (or to NOT_FRAME_SCOPED)."""
    routes = set()
    for pattern in synthesis_urls.urlpatterns:
        view = pattern.callback.view_class
        routes |= {(pattern.name, m) for m in HANDLERS if hasattr(view, m)}
    assert {name for name, _ in routes} >= NOT_FRAME_SCOPED
    assert {r for r in routes if r[0] not in NOT_FRAME_SCOPED} == set(ENDPOINTS)


@pytest.mark.parametrize(("name", "method"), list(ENDPOINTS), ids=[" ".join(e) for e in ENDPOINTS])
def test_an_outsider_gets_the_404_a_missing_frame_gets_and_changes_nothing(
    user, other_api, name, method
):
    table = Table(user)
    template, missing_id, body = ENDPOINTS[(name, method)]
    path, body = fill(template, table.ids), fill(body, table.ids)
    assert resolve(path).url_name == name  # a real route, not the API's catch-all 404
    before = table.state()

    response = call(other_api, method, path, body)

    assert response.status_code == 404, response.content
    assert response["Content-Type"] == "application/json"
    detail = response.json()["detail"]
    assert isinstance(detail, str) and detail
    assert "OUTSIDER" not in detail and "ALICE" not in detail
    assert table.state() == before
    frame = Frame.objects.get(pk=table.frame.pk)
    assert frame.status == "open" and frame.invite_code == table.frame.invite_code
    liquid = Liquid.objects.get(pk=table.liquid.pk)
    assert liquid.status == "submitted" and liquid.content == "ALICE-INTENT"
    assert Seat.objects.get(pk=table.alice.pk).user == table.alice_player

    # A row that does not exist at all is answered alike: no existence leak.
    nowhere = fill(template, {**table.ids, missing_id: str(uuid.uuid4())})
    absent = call(other_api, method, nowhere, fill(body, table.ids))
    assert (absent.status_code, absent.json()) == (404, response.json())


def test_someone_who_knows_the_invite_code_but_took_no_seat_sees_nothing_of_the_frame(
    user, other_api
):
    table = Table(user)
    preview = other_api.get(f"/api/frames/invite/{table.frame.invite_code}")
    assert preview.status_code == 200 and preview.json()["frame"]["id"] == str(table.frame.id)
    assert preview.json()["my_seat"] is None
    assert "ALICE-INTENT" not in preview.content.decode()

    response = other_api.get(f"/api/frames/{table.frame.id}")
    assert response.status_code == 404
    missing = other_api.get(f"/api/frames/{uuid.uuid4()}")
    assert response.json() == missing.json()
    assert other_api.get("/api/frames").json() == []
    # Taking a seat is what the code is for; once seated, the frame opens.
    seat = table.frame.seats.get(position=2)  # Tony, an AI seat: not open
    refused = other_api.post(
        "/api/frames/join",
        {"invite_code": table.frame.invite_code, "seat": str(seat.id)},
        format="json",
    )
    assert refused.status_code == 409
    assert other_api.get(f"/api/frames/{table.frame.id}").status_code == 404


async def closed_with(communicator: WebsocketCommunicator) -> int:
    await communicator.connect()
    message = await communicator.receive_output(timeout=5)
    assert message["type"] == "websocket.close"
    return message["code"]


@pytest.mark.django_db(transaction=True)
async def test_an_outsiders_socket_is_refused_like_one_to_a_frame_that_does_not_exist():
    gm, outsider = await database_sync_to_async(lambda: (UserFactory(), UserFactory()))()
    table = await database_sync_to_async(Table)(gm)
    client = await database_sync_to_async(logged_in_client)(outsider)
    refused = await closed_with(frame_socket(table.frame.id, client))
    assert refused == 4403  # refused for good: the client stops reconnecting
    assert await closed_with(frame_socket(uuid.uuid4(), client)) == refused


@pytest.mark.parametrize(
    ("name", "method"), [key for key, (_, _, body) in ENDPOINTS.items() if body is not None]
)
def test_an_outsider_with_a_bad_body_is_told_not_found_not_what_is_wrong_with_it(
    user, other_api, name, method
):
    # Telling an outsider their body is invalid would tell them the route reached a frame.
    table = Table(user)
    template, _, _ = ENDPOINTS[(name, method)]
    response = call(other_api, method, fill(template, table.ids), {"content": ["not", "text"]})
    assert response.status_code == 404, response.content
