"""Frame sockets: their groups, the frame's sequence, and the ways to publish to them.
What each synthesis event holds, and who reads it, is in synthesis/events.py.

Every socket on a frame joins the frame group and exactly one audience group: the GM's,
or its player's seat's. Events whose body is the same for everyone go to the frame group;
events whose body depends on the reader (another player's liquid under
`liquid_visibility`, a narrative) go to each audience group with the body that audience
may read, so no socket gets one event twice. Choosing audiences is a privacy decision: the
`*_audiences` functions are pure and unit-tested.

Frame-wide events carry the frame's `seq` (+1 per event, in the transaction that changes
the data) and are sent after it commits. Streamed narrative deltas carry only their
stream's `index` and are sent as they stream, outside any transaction. Presence carries
neither.
"""

import uuid
from collections.abc import Callable
from typing import Any

from django.db import connection

from lmix.realtime.codes import CLOSE_GONE
from lmix.realtime.publish import group_send, group_send_on_commit, revoke_on_commit
from lmix.realtime.wire import Event
from lmix.seq import seq_next
from productions.knowledge import public_name

from .event_types import ModelWaiting, Presence, PresenceAsk, SeatBody
from .frame_selectors import FrameAccess
from .models import Frame, Seat

Audiences = dict[str, dict[str, Any]]  # group → the fields of the event its sockets receive


def frame_group(frame_id: object) -> str:
    return f"frame.{frame_id}"


def gm_group(frame_id: object) -> str:
    return f"frame.{frame_id}.gm"


def seat_group(frame_id: object, seat_id: object) -> str:
    return f"frame.{frame_id}.seat.{seat_id}"


def spectator_group(frame_id: object) -> str:
    """Spectators' sockets: the public events only (outcomes, windows, seats, the frame's
    status), never liquid, a narrative or table talk."""
    return f"frame.{frame_id}.spectators"


def socket_groups(access: FrameAccess) -> list[str]:
    """The groups a socket joins: the frame's, and the GM's or its player's seats'."""
    frame_id = access.frame.pk
    if access.is_gm:
        return [frame_group(frame_id), gm_group(frame_id)]
    return [frame_group(frame_id), *(seat_group(frame_id, s) for s in sorted(access.seat_ids))]


def frame_sockets_close_on_commit(frame_id: object) -> None:
    """Once committed, every socket on the frame (the GM's, the players', the spectators')
    leaves its groups and closes with 4404: the frame was closed for good or deleted, and
    the client stops reconnecting. Call it after the transaction's last event: the outbox
    sends in publish order, so each socket receives that event (`frame.closed`) first."""
    for group in (frame_group(frame_id), spectator_group(frame_id)):
        revoke_on_commit(group, close_code=CLOSE_GONE)


def seat_body(seat: Seat) -> dict[str, Any]:
    """A seat as everyone in the frame may read it (JSON types only), in events and
    snapshots alike."""
    return SeatBody(
        id=str(seat.pk),
        persona=str(seat.persona_id),
        name=public_name(seat.persona),  # everyone in the frame reads it
        avatar_url=seat.persona.avatar_url,
        controller=seat.controller,
        user=seat.user_id,
        player=seat.user.username if seat.user_id else None,
        assistant=str(seat.assistant_id) if seat.assistant_id else None,
        ai_reacts=seat.ai_reacts,
    ).model_dump()


def spectator_seat_body(seat: Seat) -> dict[str, Any]:
    """A seat as a spectator reads it: the character and whether a player or an AI plays
    it, never the player's account (anyone with the link may be watching, signed out too)."""
    return {**seat_body(seat), "user": None, "player": None}


def lock_frame(frame_id: object) -> None:
    """Hold the frame's row until the transaction ends. Every write in a frame that must
    be ordered (outcomes, liquid, windows, passes) takes it first: frame, then its rows."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    # Raw, like next_seq: every ordered write runs it, and building the query with the ORM
    # costs more than the lock itself.
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT 1 FROM "{Frame._meta.db_table}" WHERE "id" = %s{lock}', [_pk(frame_id)]
        )
        if cursor.fetchone() is None:
            raise Frame.DoesNotExist("The frame is gone.")


def next_seq(frame_id: object) -> int:
    """Take the frame's next sequence number (call inside the changing transaction)."""
    return seq_next(Frame, frame_id)


def _pk(frame_id: object) -> object:
    """A frame id as the database takes it in a raw statement."""
    return Frame._meta.pk.get_db_prep_value(uuid.UUID(str(frame_id)), connection)


def notify_frame(frame_id: object, event_type: type[Event], **fields: Any) -> None:
    """A frame-wide event, the same for everyone: built with the next `seq`, sent after
    commit; to the spectators too when its `audiences` say so (their sequence has holes:
    they skip the rest)."""
    event = event_type(**fields, seq=next_seq(frame_id)).wire()
    group_send_on_commit(frame_group(frame_id), event)
    if "spectators" in event_type.audiences:
        group_send_on_commit(spectator_group(frame_id), event)


def notify_audiences(frame_id: object, event_type: type[Event], audiences: Audiences) -> None:
    """A frame-wide event whose body depends on the reader: one `seq`, one event per
    audience group (its fields from `audiences`), sent after commit."""
    seq = next_seq(frame_id)
    for group, fields in audiences.items():
        group_send_on_commit(group, event_type(**fields, seq=seq).wire())


def notify_presence(frame_id: object, seat_id: object, *, typing: bool) -> None:
    """Someone is typing for a seat: ephemeral, never numbered, never the text."""
    event = Presence(type="presence", seat=str(seat_id), typing=typing)
    group_send(frame_group(frame_id), event.wire())


def model_waiting(frame_id: object, seat_id: object | None, step: str) -> Callable[[int], None]:
    """What a model call is told while it waits for its server (lmix/llm/slots.py): the
    table sees "waiting for the model (2 ahead)" on that character's moment."""
    seat = str(seat_id) if seat_id else None

    def waiting(ahead: int) -> None:
        event = ModelWaiting(type="model.waiting", seat=seat, step=step, ahead=ahead)
        group_send(frame_group(frame_id), event.wire())

    return waiting


def notify_presence_ask(frame_id: object) -> None:
    """A seatless reader (the GM) arrived: the players' sockets answer that they are here."""
    group_send(frame_group(frame_id), PresenceAsk(type="presence.ask").wire())


def notify_online(frame_id: object, seat_id: object, *, online: bool, hello: bool = False) -> None:
    """A seat's player is here (a socket of theirs is open) or gone. `hello` comes from a
    socket that just connected and asks the others to say they are here too."""
    fields: dict[str, Any] = {"hello": True} if hello else {}
    event = Presence(type="presence", seat=str(seat_id), online=online, **fields)
    group_send(frame_group(frame_id), event.wire())
