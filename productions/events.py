"""What production sockets are sent: small events, only to the production's owner.

State changes carry the production's `seq`, increased by one per event in the same
transaction that changes the data, so a client that sees a gap re-reads over REST. Streamed
deltas carry only their turn's `index`: they are published at once, never written one by
one (the text is checkpointed; see generation.py).
"""

import json
from typing import Any

from rest_framework.renderers import JSONRenderer

from lmix.realtime.publish import group_send, group_send_on_commit
from lmix.realtime.wire import Event, fast_wire
from lmix.seq import seq_next

from .event_types import (
    Autoplay,
    AutoplayStop,
    CastStateChanged,
    DraftDone,
    DraftFailed,
    DraftToken,
    HeadMoved,
    TurnBody,
    TurnEvent,
    TurnRerun,
    TurnsDeleted,
    TurnToken,
)
from .models import Production, Turn


def production_group(production_id: object) -> str:
    """The only group a production's events go to; sockets join it after an owner check."""
    return f"production.{production_id}"


def _notify(production_id: object, event_type: type[Event], **fields: Any) -> None:
    """A numbered event: built with the production's next `seq`, sent after commit."""
    event = event_type(**fields, seq=seq_next(Production, production_id, "event_seq"))
    group_send_on_commit(production_group(production_id), event.wire())


def turn_event_body(turn: Turn) -> TurnBody:
    """The turn as plain JSON types (the Redis layer packs with msgpack), without the
    directive: big bodies are read over REST."""
    from .serializers import TurnSerializer

    return TurnBody(**json.loads(JSONRenderer().render(TurnSerializer(turn).data)))


def notify_turn_created(turn: Turn) -> None:
    _notify(turn.production_id, TurnEvent, type="turn.created", turn=turn_event_body(turn))


def notify_turn_token(turn: Turn, *, index: int, delta: str) -> None:
    """Published now, not after a commit: a delta is in no transaction. `attempt` names
    the run it belongs to, so a client that missed `turn.restarted` still tells a new
    run's deltas from the old one's."""
    event = fast_wire(
        TurnToken,
        type="turn.token",
        turn=str(turn.pk),
        attempt=turn.attempts,
        index=index,
        delta=delta,
    )
    group_send(production_group(turn.production_id), event)


def notify_turn_restarted(turn: Turn) -> None:
    """The turn's worker died: it is generated again from the start, its text reset."""
    _notify(
        turn.production_id,
        TurnRerun,
        type="turn.restarted",
        turn=turn_event_body(turn),
        attempt=turn.attempts + 1,
    )


def notify_turn_finished(turn: Turn) -> None:
    kind = "turn.failed" if turn.status == "failed" else "turn.done"
    _notify(turn.production_id, TurnEvent, type=kind, turn=turn_event_body(turn))


def notify_turn_edited(turn: Turn) -> None:
    _notify(turn.production_id, TurnEvent, type="turn.edited", turn=turn_event_body(turn))


def notify_turn_continued(turn: Turn) -> None:
    """A finished turn is extended by a new run (`attempt`), from its text and deltas so
    far."""
    _notify(
        turn.production_id,
        TurnRerun,
        type="turn.continued",
        turn=turn_event_body(turn),
        attempt=turn.attempts + 1,
    )


def notify_turns_deleted(
    production_id: object, *, deleted: list[str], reparented: list[str], head: object
) -> None:
    """Turns removed; `reparented` children of a deleted turn now hang from its parent."""
    _notify(
        production_id,
        TurnsDeleted,
        type="turns.deleted",
        turns=deleted,
        reparented=reparented,
        head=str(head) if head else None,
    )


def notify_head_moved(production: Production) -> None:
    """Another branch is followed (chosen, rewound to, restored): clients show it."""
    head = production.head_id
    _notify(production.pk, HeadMoved, type="head.moved", head=str(head) if head else None)


def notify_cast_state(production_id: object, turn_id: object) -> None:
    """A turn's state pass changed the cast's state (sent by synthesis, which runs it)."""
    _notify(production_id, CastStateChanged, type="cast.state", turn=str(turn_id))


_DRAFT_EVENTS: dict[str, type[Event]] = {
    "draft.token": DraftToken,
    "draft.done": DraftDone,
    "draft.failed": DraftFailed,
}


def notify_draft(production_id: object, kind: str, draft_id: str, **fields: Any) -> None:
    """An impersonation draft's delta or end: published now, stored nowhere (it becomes a
    turn only when its player sends it). Deltas take the unvalidated path, as turns'."""
    event_type = _DRAFT_EVENTS[kind]
    fields = {"type": kind, "draft": draft_id, **fields}
    event = (
        fast_wire(event_type, **fields) if kind == "draft.token" else event_type(**fields).wire()
    )
    group_send(production_group(production_id), event)


def notify_autoplay(production: Production, *, failed_turn: Turn | None = None) -> None:
    """Auto-play's turns left; when a failed turn ended it, that turn's id and error."""
    fields: dict[str, Any] = {"autoplay_remaining": production.autoplay_remaining}
    if failed_turn is not None:
        fields["stopped_by"] = AutoplayStop(turn=str(failed_turn.pk), error=failed_turn.error)
    _notify(production.pk, Autoplay, type="autoplay", **fields)


def revoke_production_sockets(production_id: object) -> None:
    """Once the transaction commits, every socket on the production leaves and closes with
    4403 (it was deleted)."""
    from lmix.realtime.publish import revoke_on_commit

    revoke_on_commit(production_group(production_id))
