"""The events production and frame sockets are sent, as pydantic models: the one contract
the server builds, the tests check and the frontend's types are generated from
(`make types`). Each model is exactly its wire dict: `extra="forbid"`, strict types (no
coercion changes what is sent), and a field left out when it was not given (`wire`).

Synthesis events (liquid, windows, outcomes, narratives, passes) are in
synthesis/event_types.py; who receives which is in docs/realtime.md.
"""

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

Uuid = str
Stamp = str  # an ISO 8601 time, as the REST answers write it


def optional(ts_type: str | None = None) -> Any:
    """A field left out of the dict when not given (never sent as null): optional in the
    generated TypeScript, not nullable."""
    return Field(default=None, json_schema_extra={"tsType": ts_type} if ts_type else None)


class Body(BaseModel):
    """A part of an event: no unknown key, no coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


# Which of a frame's groups an event goes to (productions/frame_events.py): the frame
# group (every GM's and player's socket), the spectators', a seat's (its player), the GM's.
Audience = Literal["frame", "spectators", "seat", "gm"]


class Event(Body):
    # Who hears it; docs/realtime.md's audience table is tested against it. A production's
    # events go to its one group.
    audiences: ClassVar[tuple[Audience, ...]] = ()
    type: str

    def wire(self) -> dict[str, Any]:
        """The dict that goes on the channel layer: built once, JSON types only; optional
        fields that were not given are left out, as the old dicts did."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


def fast_wire(event_type: type[Event], **fields: Any) -> dict[str, Any]:
    """A streamed delta's dict, unvalidated (one per token: the hot path, where building
    the model would cost ten times the dict). Give every field of `event_type`, in its
    order; tests/test_event_contract.py checks what the callers build against it."""
    return fields


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
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int | None
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
    Autoplay,
    DraftToken,
    DraftDone,
    DraftFailed,
)

# ---------- frames: seats, settings, presence (the rest: synthesis/event_types.py) ----------


class SeatBody(Body):
    """A seat as everyone in the frame may read it."""

    id: Uuid
    persona: Uuid
    name: str
    avatar_url: str
    controller: Literal["open", "human", "ai"]
    user: int | None
    player: str | None
    assistant: Uuid | None


class SeatChanged(Event):
    audiences = ("frame", "spectators")
    type: Literal["seat.changed"]
    seat: SeatBody
    seq: int


class FrameSettings(Body):
    name: str
    tempo: int | float
    liquid_visibility: Literal["all", "own", "gm"]


class FrameUpdated(Event):
    audiences = ("frame", "spectators")
    type: Literal["frame.updated"]
    frame: FrameSettings
    seq: int


class Presence(Event):
    """Typing (`typing`), or whether a socket of the seat's player is open (`online`;
    `hello` asks the others to answer). Never numbered, never the text."""

    audiences = ("frame",)
    type: Literal["presence"]
    seat: Uuid
    typing: bool = optional()
    online: bool = optional()
    hello: bool = optional()
