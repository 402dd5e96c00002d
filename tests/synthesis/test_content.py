"""World content of a frame: the GM adds and edits entries (recorded), everyone at the
table reads them and is told at once; spectators and outsiders get nothing."""

import pytest

from lmix.realtime import publish
from synthesis.content import content_add
from synthesis.models import Content
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

HARBOUR = {
    "type": "location",
    "name": "The Old Harbour",
    "data": {"description": "Fog, gulls and a locked customs house.", "exits": "North: the market"},
    "pscale": 1,
}


def add(client, frame, **body):
    return client.post(f"/api/frames/{frame.id}/content", HARBOUR | body, format="json")


def test_the_gm_adds_content_everyone_at_the_table_reads(api, user, other_api):
    frame = make_frame(user, open_seats=1)
    _, alice = seat_player(frame, 0)
    seq = alice.get(f"/api/frames/{frame.id}").json()["seq"]
    made = add(api, frame)
    assert made.status_code == 201, made.content
    entry = made.json()
    assert entry["name"] == "The Old Harbour" and entry["data"]["exits"] == "North: the market"
    assert entry["pscale"] == 1 and entry["edited"] is False
    for client in (api, alice):
        view = client.get(f"/api/frames/{frame.id}").json()
        assert [c["id"] for c in view["content"]] == [entry["id"]]
        assert view["seq"] == seq + 1  # an event of the frame
        listed = client.get(f"/api/frames/{frame.id}/content").json()
        assert [c["name"] for c in listed] == ["The Old Harbour"]
    assert other_api.get(f"/api/frames/{frame.id}/content").status_code == 404
    assert add(alice, frame, name="My hideout").status_code == 403
    assert Content.objects.filter(frame=frame).count() == 1


def test_bad_content_is_refused_with_a_reason_and_nothing_is_stored(api, user):
    frame = make_frame(user, open_seats=1)
    assert add(api, frame).status_code == 201
    again = add(api, frame, name="the old harbour ")
    assert again.status_code == 409 and "edit that one" in again.json()["detail"]
    assert add(api, frame, type="npc").status_code == 201  # another type may share the name
    empty = add(api, frame, name="Nowhere", data={"description": "  "})
    assert empty.status_code == 400 and "data" in empty.json()["errors"]
    assert add(api, frame, name="X", type="planet").status_code == 400
    assert add(api, frame, name="X", pscale=5).status_code == 400
    wide = {f"f{i}": "x" for i in range(13)} | {"description": "d"}
    assert add(api, frame, name="X", data=wide).status_code == 400
    assert add(api, frame, name="X", data={"description": ["not", "text"]}).status_code == 400
    api.post(f"/api/frames/{frame.id}/close")
    closed = add(api, frame, name="Too late")
    assert closed.status_code == 409 and "closed" in closed.json()["detail"]
    assert sorted(Content.objects.filter(frame=frame).values_list("type", flat=True)) == [
        "location",
        "npc",
    ]


def test_the_gms_edit_is_recorded_and_checked(api, user):
    frame = make_frame(user, open_seats=1)
    _, alice = seat_player(frame, 0)
    entry = add(api, frame).json()
    add(api, frame, name="The Market")
    url = f"/api/frames/{frame.id}/content/{entry['id']}"
    changed = api.patch(url, {"data": {"description": "Burnt down last night."}}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["edited"] is True and changed.json()["name"] == "The Old Harbour"
    row = Content.objects.get(pk=entry["id"])
    assert row.edited_by == user and row.edited_at is not None
    assert row.data == {"description": "Burnt down last night."}
    clash = api.patch(url, {"name": "the market"}, format="json")
    assert clash.status_code == 409
    assert alice.patch(url, {"name": "Mine"}, format="json").status_code == 403
    missing = f"/api/frames/{frame.id}/content/{frame.id}"
    assert api.patch(missing, {"name": "?"}, format="json").status_code == 404
    assert Content.objects.get(pk=entry["id"]).name == "The Old Harbour"


def test_content_events_go_to_the_table_never_to_spectators(
    user, monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(publish, "_put", lambda group, message: sent.append((group, message)))
    frame = make_frame(user, open_seats=1)
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        content_add(frame=frame, user=user, **HARBOUR)
    events = [(group, m["payload"]) for group, m in sent if m["type"] == "group.event"]
    assert [(group, e["type"], e["content"]["name"]) for group, e in events] == [
        (f"frame.{frame.id}", "content.added", "The Old Harbour")
    ]
