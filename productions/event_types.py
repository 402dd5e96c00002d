"""The events a production's socket is sent, as pydantic models (lmix/realtime/wire.py):
the one contract the server builds, the tests check and the frontend's types are generated
from (`make types`). A frame's events are in synthesis/event_types.py."""

from typing import Literal

from lmix.realtime.wire import Body, Event, Stamp, Uuid, optional

# ---------- productions: a production's turns ----------


class TurnBody(Body):
    """A turn as TurnSerializer writes it, without its directive (read over REST)."""

    id: Uuid
    parent: Uuid | None
    depth: int
    speaker_kind: Literal["assistant", "director", "persona"]
    assistant: Uuid | None
    speaker_name: str
    avatar_url: str
    content: str
    token_count: int
    attempts: int
    status: Literal["pending", "streaming", "done", "failed", "stopped"]
    error: str
    model_id: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    created_at: Stamp
    edited_at: Stamp | None


class TurnEvent(Event):
    type: Literal["turn.created", "turn.done", "turn.failed", "turn.edited"]
    turn: TurnBody
    seq: int


class TurnRerun(Event):
    """A turn written again from the start (`restarted`) or extended (`continued`) by run
    `attempt`."""

    type: Literal["turn.restarted", "turn.continued"]
    turn: TurnBody
    attempt: int
    seq: int


class TurnToken(Event):
    type: Literal["turn.token"]
    turn: Uuid
    attempt: int
    index: int
    delta: str


class TurnsDeleted(Event):
    type: Literal["turns.deleted"]
    turns: list[Uuid]
    reparented: list[Uuid]
    head: Uuid | None
    seq: int


class HeadMoved(Event):
    """The branch being followed changed (a sibling chosen, a rewind, its restore)."""

    type: Literal["head.moved"]
    head: Uuid | None
    seq: int


class CastStateChanged(Event):
    """The cast's state changed after `turn` (its state pass ended): read it again."""

    type: Literal["cast.state"]
    turn: Uuid
    seq: int


class AutoplayStop(Body):
    turn: Uuid
    error: str


class Autoplay(Event):
    type: Literal["autoplay"]
    autoplay_remaining: int
    stopped_by: AutoplayStop = optional()
    seq: int


class DraftToken(Event):
    type: Literal["draft.token"]
    draft: Uuid
    index: int
    delta: str


class DraftDone(Event):
    type: Literal["draft.done"]
    draft: Uuid
    content: str


class DraftFailed(Event):
    type: Literal["draft.failed"]
    draft: Uuid
    error: str


PRODUCTION_EVENTS: tuple[type[Event], ...] = (
    TurnEvent,
    TurnRerun,
    TurnToken,
    TurnsDeleted,
    HeadMoved,
    CastStateChanged,
    Autoplay,
    DraftToken,
    DraftDone,
    DraftFailed,
)
