"""Who receives each frame event (issue 7, §6): one small test per function that chooses
recipients, with no socket and no worker. Group names are written out in full, so a
renamed, merged or extra group fails here; where the body depends on the reader, each
audience's body is checked for what it must not hold."""

from types import SimpleNamespace

import pytest
from asgiref.sync import async_to_sync

from lmix.realtime import publish
from synthesis.consumers import SpectatorConsumer
from synthesis.events import (
    PLAYER_PASS_ERROR,
    narrative_groups,
    notify_liquid,
    notify_narrative_done,
    notify_narrative_token,
    notify_outcome,
    notify_pass_failed,
    pass_failed_audiences,
)
from synthesis.frame_events import (
    notify_presence,
    notify_presence_ask,
    socket_groups,
)
from synthesis.frame_selectors import FrameAccess, frame_access
from synthesis.frames import frame_join, seat_leave, seat_update, spectators_set
from synthesis.liquid import frame_status_set
from synthesis.models import Frame, Liquid, Narrative, Outcome, Pass, Seat, Window
from synthesis.selectors import spectator_view
from synthesis.talk import talk_post
from synthesis.windows import window_cancel
from tests.factories import UserFactory
from tests.synthesis.conftest import Scene, make_frame

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch):
    """(group, layer message) for everything published, in order: events and revocations."""
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(publish, "_put", lambda group, message: sent.append((group, message)))
    return sent


def events(sent) -> list[tuple[str, dict]]:
    return [(group, m["payload"]) for group, m in sent if m["type"] == "group.event"]


def revocations(sent) -> list[tuple[str, dict]]:
    return [(group, m) for group, m in sent if m["type"] == "group.revoke"]


def names(frame: Frame) -> SimpleNamespace:
    base = f"frame.{frame.id}"
    return SimpleNamespace(
        frame=base,
        gm=f"{base}.gm",
        spectators=f"{base}.spectators",
        seat=lambda seat: f"{base}.seat.{seat.id}",
    )


@pytest.fixture
def scene(user) -> Scene:
    """Alice and Bob seated, Tony played by an assistant; `user` is the GM."""
    return Scene(user)


# Sockets: which groups each reader joins.


def test_sockets_join_the_frame_group_and_the_gms_or_their_seats_group(scene, user):
    g = names(scene.frame)

    def groups(who) -> list[str]:
        return socket_groups(frame_access(user=who, frame_id=scene.frame.id))

    assert groups(user) == [g.frame, g.gm]
    assert groups(scene.alice_player) == [g.frame, g.seat(scene.alice)]
    assert groups(scene.bob_player) == [g.frame, g.seat(scene.bob)]
    assert frame_access(user=UserFactory(), frame_id=scene.frame.id) is None  # no groups at all

    # A GM who also plays a seat hears it through the GM group only, never twice.
    Seat.objects.filter(pk=scene.tony.pk).update(user=user, controller="human", assistant=None)
    assert groups(user) == [g.frame, g.gm]

    # Two seats for one player: the database forbids it (one seat per user and frame), but
    # socket_groups is pure: it would join both seat groups, in a stable order.
    two = sorted([scene.alice.id, scene.tony.id])
    access = FrameAccess(frame=scene.frame, is_gm=False, seat_ids=frozenset(reversed(two)))
    assert socket_groups(access) == [g.frame, *(f"{g.frame}.seat.{seat}" for seat in two)]


@pytest.mark.django_db(transaction=True)  # the consumer reads through database_sync_to_async
def test_a_spectator_joins_the_spectator_group_only_while_the_link_is_allowed(user):
    frame = spectators_set(frame=make_frame(user), enabled=True)
    consumer = SpectatorConsumer()
    consumer.scope = {"url_route": {"kwargs": {"code": frame.spectator_code}}}
    assert async_to_sync(consumer.authorize)(UserFactory()) == [names(frame).spectators]
    spectators_set(frame=frame, enabled=False)
    assert async_to_sync(consumer.authorize)(UserFactory()) is None


# Private streams: narratives.


def test_a_narrative_goes_to_its_seat_and_the_gm_a_shared_one_to_the_frame(
    scene, published, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    own = Narrative.objects.create(
        frame=scene.frame, seat=scene.alice, user=scene.alice_player, trigger="expiry"
    )
    shared = Narrative.objects.create(
        frame=scene.frame, seat=scene.alice, trigger="commit", shared=True
    )
    assert narrative_groups(own) == [g.seat(scene.alice), g.gm]
    assert narrative_groups(shared) == [g.frame]

    # Deltas go out at once, to those groups only, unnumbered.
    notify_narrative_token(own, index=0, delta="ALICE-ONLY")
    assert [group for group, _ in events(published)] == [g.seat(scene.alice), g.gm]
    assert all(e["delta"] == "ALICE-ONLY" and "seq" not in e for _, e in events(published))
    published.clear()

    # The stored narrative after commit, to the same readers.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        notify_narrative_done(own)
        notify_narrative_done(shared)
        assert published == []  # nothing before the commit
    assert len(callbacks) == 3
    assert [(group, e["type"], e["narrative"]["id"]) for group, e in events(published)] == [
        (g.seat(scene.alice), "narrative.done", str(own.id)),
        (g.gm, "narrative.done", str(own.id)),
        (g.frame, "narrative.done", str(shared.id)),
    ]


# Per-reader frame-wide events: liquid and failed passes.


@pytest.mark.parametrize("visibility", ["all", "own", "gm"])
def test_liquid_events_reach_each_reader_once_with_text_only_for_those_who_may_read_it(
    user, published, django_capture_on_commit_callbacks, visibility
):
    scene = Scene(user, liquid_visibility=visibility)
    g = names(scene.frame)
    liquid = Liquid.objects.create(
        frame=scene.frame, seat=scene.alice, content="MARKER", refined="REFINED"
    )
    with django_capture_on_commit_callbacks(execute=True):
        notify_liquid("liquid.created", liquid, frame=scene.frame)  # reads the seats itself
    sent = dict(events(published))
    assert len(sent) == len(events(published))  # one message per group
    assert {e["seq"] for e in sent.values()} == {Frame.objects.get(pk=scene.frame.pk).seq}
    assert all(e["type"] == "liquid.created" for e in sent.values())
    assert set(sent) == {g.gm, g.seat(scene.alice), g.seat(scene.bob)}  # Tony has no player
    for readable in (g.gm, g.seat(scene.alice)):
        assert sent[readable]["liquid"]["content"] == "MARKER"
        assert sent[readable]["liquid"]["refined"] == "REFINED"
    bobs = sent[g.seat(scene.bob)]["liquid"]
    assert bobs["id"] == str(liquid.id)
    # The soft pass's words on it are Alice's and the GM's, whatever the visibility.
    assert "refined" not in bobs and "REFINED" not in str(bobs)
    assert bobs.get("content") == ("MARKER" if visibility == "all" else None)


def test_liquid_everyone_reads_whole_goes_once_to_the_frame(
    user, published, django_capture_on_commit_callbacks
):
    scene = Scene(user, liquid_visibility="all")
    liquid = Liquid.objects.create(frame=scene.frame, seat=scene.alice, content="MARKER")
    with django_capture_on_commit_callbacks(execute=True):
        notify_liquid("liquid.created", liquid, frame=scene.frame)
    sent = dict(events(published))
    assert list(sent) == [names(scene.frame).frame]
    assert sent[names(scene.frame).frame]["liquid"]["content"] == "MARKER"


def test_a_failed_pass_is_seen_by_everyone_its_reason_by_the_gm_and_a_generic_one_by_its_player(
    scene, published, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    pass_ = Pass.objects.create(
        frame=scene.frame,
        seat=scene.alice,
        kind="medium",
        trigger="expiry",
        status="failed",
        error="THE-REASON",
    )
    seats = list(scene.frame.seats.order_by("position"))
    audiences = pass_failed_audiences(pass_, seats=seats)
    assert set(audiences) == {g.gm, g.seat(scene.alice), g.seat(scene.bob)}  # not Tony's
    for body in audiences.values():
        assert body["type"] == "pass.failed"
        assert body["pass"]["id"] == str(pass_.id) and body["pass"]["status"] == "failed"
    assert audiences[g.gm]["pass"]["error"] == "THE-REASON"
    assert audiences[g.seat(scene.alice)]["pass"]["error"] == PLAYER_PASS_ERROR
    assert "THE-REASON" not in str(audiences[g.seat(scene.alice)])
    assert "error" not in audiences[g.seat(scene.bob)]["pass"]
    assert "THE-REASON" not in str(audiences[g.seat(scene.bob)])

    with django_capture_on_commit_callbacks(execute=True):
        notify_pass_failed(pass_, seats=seats)
        assert published == []
    sent = dict(events(published))
    assert set(sent) == set(audiences) and len(events(published)) == 3
    assert {e["seq"] for e in sent.values()} == {Frame.objects.get(pk=scene.frame.pk).seq}
    assert "error" not in sent[g.seat(scene.bob)]["pass"]


# Events with one body for everyone: the frame group, and the spectators when public.


@pytest.mark.parametrize("flags", [[], ["names a secret"]])
def test_an_outcome_goes_to_the_frame_and_spectators_and_its_flags_to_the_gm_only(
    scene, published, django_capture_on_commit_callbacks, flags
):
    g = names(scene.frame)
    outcome = Outcome.objects.create(
        frame=scene.frame, seq=7, seat=scene.alice, world_facts=["Rain."], flags=flags
    )
    with django_capture_on_commit_callbacks(execute=True):
        notify_outcome(outcome)
        assert published == []
    sent = events(published)
    created = [(group, e) for group, e in sent if e["type"] == "outcome.created"]
    assert [group for group, _ in created] == [g.frame, g.spectators]
    for _, event in created:
        assert event["seq"] == 7 and event["outcome"]["id"] == str(outcome.id)
        assert "flags" not in event["outcome"]
    flagged = [(group, e) for group, e in sent if e["type"] == "outcome.flagged"]
    if flags:
        assert flagged == [
            (g.gm, {"type": "outcome.flagged", "outcome": str(outcome.id), "flags": flags})
        ]
    else:
        assert flagged == []
    assert len(sent) == len(created) + len(flagged)


def test_a_window_event_goes_to_the_frame_and_the_spectators(
    scene, published, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    window = scene.window(scene.alice, status="open")
    with django_capture_on_commit_callbacks(execute=True):
        window_cancel(window=window)  # notify_window("window.cancelled", cause={kind: gm})
    sent = events(published)
    assert [group for group, _ in sent] == [g.frame, g.spectators]
    seq = Frame.objects.get(pk=scene.frame.pk).seq
    for _, event in sent:
        assert event == {
            "type": "window.cancelled",
            "window": event["window"],
            "cause": {"kind": "gm"},
            "seq": seq,
        }
        assert event["window"]["id"] == str(window.id)
        assert event["window"]["status"] == "cancelled"
    assert Window.objects.get(pk=window.pk).status == "cancelled"


def test_the_frames_status_goes_to_the_frame_and_the_spectators(
    scene, published, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    moves = [("paused", "frame.paused"), ("open", "frame.resumed"), ("closed", "frame.closed")]
    for status, kind in moves:
        published.clear()
        with django_capture_on_commit_callbacks(execute=True):
            frame_status_set(frame=scene.frame, status=status)
        seq = Frame.objects.get(pk=scene.frame.pk).seq
        assert events(published) == [
            (group, {"type": kind, "status": status, "windows": [], "seq": seq})
            for group in (g.frame, g.spectators)
        ]


def test_a_seat_taken_goes_to_the_frame_and_the_spectators_and_revokes_nobody(
    user, published, django_capture_on_commit_callbacks
):
    frame = make_frame(user, open_seats=1)
    g = names(frame)
    seat = frame.seats.get(position=0)
    player = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):
        frame_join(user=player, invite_code=frame.invite_code, seat_id=seat.pk)
    assert revocations(published) == []
    *sent, (group, notice) = events(published)
    assert [group for group, _ in sent] == [g.frame, g.spectators]
    for to, event in sent:
        assert event["type"] == "seat.changed" and event["seat"]["id"] == str(seat.id)
        assert event["seat"]["controller"] == "human"
        # Spectators read that a player took it, never whose account.
        assert event["seat"]["user"] == (player.pk if to == g.frame else None)
    # The table reads who joined; spectators never read table talk.
    assert (group, notice["type"], notice["talk"]["kind"]) == (g.frame, "talk.created", "join")
    assert notice["talk"]["author"] == player.username


@pytest.mark.parametrize("how", ["released", "kicked"])
def test_a_seat_released_or_kicked_revokes_its_player_and_tells_the_frame(
    scene, published, django_capture_on_commit_callbacks, how
):
    g = names(scene.frame)
    with django_capture_on_commit_callbacks(execute=True):
        if how == "released":
            seat_leave(seat=scene.alice)
        else:
            seat_update(frame=scene.frame, seat=scene.alice, controller="open")
        assert published == []  # nothing before the commit
    # Every socket of that player leaves all the frame's groups and closes with 4403.
    assert revocations(published) == [
        (
            g.frame,
            {"type": "group.revoke", "user_id": str(scene.alice_player.pk), "close_code": 4403},
        )
    ]
    *sent, (group, notice) = events(published)
    assert [group for group, _ in sent] == [g.frame, g.spectators]
    for _, event in sent:
        assert event["type"] == "seat.changed" and event["seat"]["id"] == str(scene.alice.id)
        assert event["seat"]["user"] is None and event["seat"]["controller"] == "open"
    kind = "leave" if how == "released" else "kick"
    assert (group, notice["type"], notice["talk"]["kind"]) == (g.frame, "talk.created", kind)
    assert notice["talk"]["author"] == scene.alice_player.username


def test_a_gm_leaving_their_own_seat_keeps_their_sockets(
    scene, user, published, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    seat_update(frame=scene.frame, seat=scene.tony, controller="open")
    frame_join(user=user, invite_code=scene.frame.invite_code, seat_id=scene.tony.pk)
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        seat_leave(seat=scene.tony)
    assert revocations(published) == []
    assert [(group, e["type"]) for group, e in events(published)] == [
        (g.frame, "seat.changed"),
        (g.spectators, "seat.changed"),
        (g.frame, "talk.created"),
    ]


def test_table_talk_and_presence_go_to_the_frame_group_never_to_spectators(
    scene, published, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    access = frame_access(user=scene.alice_player, frame_id=scene.frame.id)
    with django_capture_on_commit_callbacks(execute=True):
        talk_post(access=access, user=scene.alice_player, text="brb")
    assert [(group, e["type"], e["talk"]["text"]) for group, e in events(published)] == [
        (g.frame, "talk.created", "brb")
    ]
    published.clear()
    notify_presence(scene.frame.id, scene.alice.id, typing=True)  # at once, unnumbered
    assert events(published) == [
        (g.frame, {"type": "presence", "seat": str(scene.alice.id), "typing": True})
    ]


def test_a_seatless_readers_roll_call_goes_to_the_frame_group_never_to_spectators(scene, published):
    g = names(scene.frame)
    notify_presence_ask(scene.frame.id)  # the GM's socket arrived; players answer
    assert events(published) == [(g.frame, {"type": "presence.ask"})]


def test_spectators_read_who_plays_a_seat_never_the_players_account(
    scene, published, user, django_capture_on_commit_callbacks
):
    g = names(scene.frame)
    seat_update(frame=scene.frame, seat=scene.alice, controller="open")
    player = UserFactory(username="ALICE-ACCOUNT")
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        frame_join(user=player, invite_code=scene.frame.invite_code, seat_id=scene.alice.pk)
    changed = {group: e["seat"] for group, e in events(published) if e["type"] == "seat.changed"}
    assert changed[g.frame]["player"] == "ALICE-ACCOUNT" and changed[g.frame]["user"] == player.pk
    assert changed[g.spectators]["controller"] == "human"
    assert changed[g.spectators]["player"] is None and changed[g.spectators]["user"] is None
    spectators_set(frame=scene.frame, enabled=True)
    watched = spectator_view(Frame.objects.get(pk=scene.frame.pk))
    assert "ALICE-ACCOUNT" not in str(watched)
    assert {s["controller"] for s in watched["seats"]} == {"human", "ai"}
