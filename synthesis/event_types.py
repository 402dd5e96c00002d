"""The events a frame's sockets are sent, as pydantic models (lmix/realtime/wire.py for
the contract: `extra="forbid"`, strict, `wire()`): seats, settings, presence, liquid,
windows, outcomes, narratives, passes, table talk. Who reads which body is decided in
synthesis/events.py; each event's `audiences` says which groups may hear it."""

from typing import Any, Literal

from pydantic import Field

from lmix.realtime.wire import Body, Event, Stamp, Uuid, json_object, object_of_strings, optional
from productions.event_types import PRODUCTION_EVENTS

# Stored model answers (an outcome's bones, a guard's flags) are sent as stored: their
# keys are the prompt schemas', and an older row must never fail to be announced.
Flags = list[Any]


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
    ai_reacts: Literal["always", "addressed", "gm"]


class SeatChanged(Event):
    audiences = ("frame", "spectators")
    type: Literal["seat.changed"]
    seat: SeatBody
    seq: int


class FrameSettings(Body):
    name: str
    tempo: int | float
    liquid_visibility: Literal["all", "own", "gm"]
    # The faces besides `player` the GM opened to players (synthesis/faces/).
    player_faces: list[Literal["author", "designer"]]


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


class ModelWaiting(Event):
    """A character's pass waits for its model server's turn (lmix/llm/slots.py): `ahead`
    calls go before it, 0 once it is sent. Ephemeral and never numbered, like presence."""

    audiences = ("frame",)
    type: Literal["model.waiting"]
    seat: Uuid | None
    step: Literal["outcome", "narrative", "act"]
    ahead: int


class PresenceAsk(Event):
    """A reader with no seat of their own (the GM) just connected: every player's socket
    says it is here (the seatless reader has no seat to say hello for)."""

    audiences = ("frame",)
    type: Literal["presence.ask"]


def stored(schema: dict[str, Any]) -> Any:
    """A stored model answer's field: any JSON when read, described to the OpenAPI schema
    and the frontend's types by `schema`."""
    return Field(json_schema_extra=schema)


# A secret guard's flag (guard.py::secret_flag), on an outcome or an AI's intention: the
# kind of secret, whose, the words that repeat it, and which test found it (older rows
# have no `source`: the word test).
FLAG_SCHEMA = json_object(
    ["kind", "owner", "excerpt"],
    kind={"type": "string"},
    owner={"type": "string"},
    excerpt={"type": "string"},
    source={"type": "string", "enum": ["words", "second_opinion"]},
)
FLAGS = {"type": "array", "items": FLAG_SCHEMA}


class FaceResult(Body):
    """What an author's or designer's liquid came to (synthesis/faces/): its `pass`; once
    done, what it made (`kind` content or skill, its `id` and `name`; `edited`: an existing
    entry refined; `replaced`: the frame's skill of that category rewritten); or why it
    failed (`error`, readable by its writer)."""

    pass_: Uuid = Field(alias="pass")
    kind: Literal["content", "skill"] = optional()
    id: Uuid = optional()
    name: str = optional()
    type: str = optional()  # a content entry's type
    face: str = optional()  # a skill's face and category
    category: str = optional()
    edited: bool = optional()
    replaced: bool = optional()
    error: str = optional()


class LiquidBody(Body):
    """A submitted intention (or an author's or designer's writing: `face`); without
    `content` for a reader who may not read it, and without the soft pass's words on it
    (`refined`, `capable_reason`, `analysis_note`) for anyone but its own seat's player and
    the GM (selectors.py::Reading). `held`: an AI seat's intention the secret guard holds
    for the GM's review. `seat` is null for the GM's own author or designer writing."""

    id: Uuid
    seat: Uuid | None
    author: int | None
    face: Literal["player", "author", "designer"]
    result: FaceResult | None
    status: Literal["submitted", "committed", "consumed", "withdrawn"]
    revision: int
    submitted_at: Stamp
    committed_at: Stamp | None
    pscale: int | None
    window_seconds: int | float | None
    interruptive: bool
    targets: list[Uuid]
    capable: bool | None
    analysis_source: str
    held: bool
    content: str = optional()
    refined: str = optional()
    capable_reason: str = optional()
    analysis_note: str = optional()


class LiquidEvent(Event):
    audiences = ("frame", "seat", "gm")  # the frame group when everyone may read it
    type: Literal[
        "liquid.created",
        "liquid.updated",
        "liquid.withdrawn",
        "liquid.analyzed",
        "liquid.committed",
        "liquid.consumed",
        "liquid.failed",
    ]
    liquid: LiquidBody
    seq: int


class LiquidFlagged(Event):
    """The GM's alone, unnumbered: the guard's flags on an intention an AI seat wrote."""

    audiences = ("gm",)
    type: Literal["liquid.flagged"]
    liquid: Uuid
    flags: Flags = stored(FLAGS)


class WindowBody(Body):
    """A character's timer; while the frame is paused `expires_at` is null and
    `remaining_seconds` kept."""

    id: Uuid
    seat: Uuid
    status: Literal["open", "firing", "fired", "cancelled", "failed"]
    pscale: int
    opened_at: Stamp
    expires_at: Stamp | None
    remaining_seconds: int | float | None


class InterruptCause(Body):
    kind: Literal["interrupt"]
    outcome: Uuid
    reason: str


class GmCause(Body):
    kind: Literal["gm"]


class WindowEvent(Event):
    audiences = ("frame", "spectators")
    type: Literal["window.opened", "window.fired", "window.done", "window.failed"]
    window: WindowBody
    seq: int


class WindowCancelled(Event):
    """`cause`: an interrupt (its outcome and reason) or the GM."""

    audiences = ("frame", "spectators")
    type: Literal["window.cancelled"]
    window: WindowBody
    cause: InterruptCause | GmCause = optional()
    seq: int


class OutcomeBody(Body):
    """The shared bones of what happened; `flags` only in the GM's snapshot. A held outcome
    (the secret guard flagged it in a frame that holds: docs/synthesis.md) reaches players
    empty (`held` true, no seat, no action, fact, interrupt or witness) until the GM
    releases it; the GM reads it whole."""

    id: Uuid
    seq: int
    seat: Uuid | None  # null: the GM's narration (its text is the one world fact)
    actions_resolved: list[dict[str, Any]] = stored(
        {"type": "array", "items": object_of_strings("seat", "action", "result")}
    )
    world_facts: list[str]
    interrupts: list[dict[str, Any]] = stored(
        {"type": "array", "items": object_of_strings("seat", "reason")}
    )
    witnesses: list[Uuid]
    held: bool
    released_at: Stamp | None
    edited_at: Stamp | None = Field(description="The GM's last edit of its text, if any.")
    created_at: Stamp
    flags: Flags = optional(FLAGS)


class OutcomeCreated(Event):
    """To the frame group (and spectators); a held one to the GM whole and to each seat's
    player empty, in one `seq` (spectators skip it)."""

    audiences = ("frame", "seat", "gm", "spectators")
    type: Literal["outcome.created"]
    seq: int
    outcome: OutcomeBody


class OutcomeReleased(Event):
    """The GM released a held outcome: now everyone's, whole (the GM's flags stay)."""

    audiences = ("frame", "spectators")
    type: Literal["outcome.released"]
    seq: int
    outcome: OutcomeBody


class OutcomeEdited(Event):
    """The GM edited an outcome's text: numbered to everyone once released; while held,
    unnumbered to the GM alone (with the flags recomputed)."""

    audiences = ("frame", "gm", "spectators")
    type: Literal["outcome.edited"]
    outcome: OutcomeBody
    seq: int = optional()


class OutcomeDiscarded(Event):
    """The GM threw a held outcome away to run its pass again: readers drop it."""

    audiences = ("frame",)
    type: Literal["outcome.discarded"]
    seq: int
    outcome: Uuid


class OutcomeFlagged(Event):
    """The GM's alone, unnumbered, right after the outcome it annotates."""

    audiences = ("gm",)
    type: Literal["outcome.flagged"]
    outcome: Uuid
    flags: Flags = stored(FLAGS)


class StateChanged(Event):
    """A seat's character state changed (a state or significance pass, or the GM's edit):
    its player and the GM re-read it (the state API); no state in the body. Unnumbered."""

    audiences = ("seat", "gm")
    type: Literal["state.changed"]
    seat: Uuid


class NarrativeBody(Body):
    id: Uuid
    seat: Uuid
    user: int | None  # who played the seat when it was written
    text: str
    token_count: int
    outcome_ids: list[Uuid]
    liquid_ids: list[Uuid]
    trigger: str
    pscale: int
    shared: bool
    status: Literal["streaming", "done", "failed"]
    created_at: Stamp


class NarrativeToken(Event):
    """A delta of a narrative (`solid`: the narrative, stored as a solid)."""

    audiences = ("frame", "seat", "gm")  # the frame group when shared
    type: Literal["narrative.token"]
    solid: Uuid
    seat: Uuid
    shared: bool
    index: int
    delta: str


class NarrativeRestarted(Event):
    """A new run writes this narrative's pass again: drop its text."""

    audiences = ("frame", "seat", "gm")
    type: Literal["narrative.restarted"]
    solid: Uuid
    seat: Uuid
    shared: bool


class NarrativeDone(Event):
    audiences = ("frame", "seat", "gm")
    type: Literal["narrative.done"]
    solid: Uuid
    seat: Uuid
    narrative: NarrativeBody


class PassSummary(Body):
    """`error`: the reason for the GM, a generic one for the seat's player, absent for
    everyone else."""

    id: Uuid
    seat: Uuid | None
    kind: Literal["soft", "medium", "epilogue", "author", "designer"]
    trigger: str
    status: Literal["pending", "running", "done", "failed", "held"]
    error: str = optional()


class PassFailed(Event):
    audiences = ("seat", "gm")
    type: Literal["pass.failed"]
    pass_: PassSummary = Field(alias="pass")  # a Python keyword
    seq: int


class FrameStatusEvent(Event):
    """`windows`: the frame's open windows in their new state."""

    audiences = ("frame", "spectators")
    type: Literal["frame.paused", "frame.resumed", "frame.closed"]
    status: Literal["open", "paused", "closed"]
    windows: list[WindowBody]
    seq: int


class TalkBody(Body):
    """A table-talk row. `say`: `author` said `text`. A notice (`join`, `leave`, `kick`)
    has no text: `author` is the player it is about and `seat` the seat they took, left or
    were removed from (its public name, as everyone knows it, is the page's to write)."""

    id: Uuid
    kind: Literal["say", "join", "leave", "kick"]
    seat: Uuid | None  # null: the GM
    author: str | None
    gm: bool
    text: str
    created_at: Stamp


class TalkCreated(Event):
    audiences = ("frame",)
    type: Literal["talk.created"]
    talk: TalkBody
    seq: int


class ContentBody(Body):
    """World content of the frame (synthesis/content.py): everyone at the table reads it."""

    id: Uuid
    type: Literal["location", "npc", "item", "event", "lore"]
    name: str
    data: dict[str, str] = Field(description="Its details by field; `description` always.")
    pscale: int
    edited: bool  # the GM (or an author's later writing) changed it after it was added
    source_liquid: Uuid | None  # the author's writing it was made from; null: the GM's
    created_at: Stamp


class ContentChanged(Event):
    audiences = ("frame",)
    type: Literal["content.added", "content.edited"]
    content: ContentBody
    seq: int


class SkillAddedBody(Body):
    """A frame skill a designer's writing made (`replaced`: it rewrote the frame's skill of
    that face and category). Its text is read in the Skills panel."""

    id: Uuid
    face: Literal["player", "author", "designer"]
    category: str
    name: str
    replaced: bool
    liquid: Uuid


class SkillAdded(Event):
    audiences = ("frame",)
    type: Literal["skill.added"]
    skill: SkillAddedBody
    seq: int


class RewindBody(Body):
    """A rewind as everyone may know of it: that the story was rewound to (or restored
    from) the outcome numbered `to_seq`, never what it hid."""

    id: int
    kind: Literal["rewind", "regenerate", "restore"]
    to_seq: int
    restored: bool


class FrameRewound(Event):
    """The GM rewound the frame (or restored a rewind): what everyone read may have gone
    or come back, so every reader re-reads its view (docs/synthesis.md, "Rewind")."""

    audiences = ("frame", "spectators")
    type: Literal["frame.rewound", "frame.restored"]
    rewind: RewindBody
    seq: int


class SceneBody(Body):
    """A scene as everyone in the frame reads it: never a summary (the public summary is in
    `GET /api/frames/{id}/scenes`; a character's own is its player's and the GM's)."""

    id: Uuid
    number: int
    title: str
    location: str
    opened_seq: int
    closed_seq: int | None
    closed_reason: Literal["", "gm", "location", "pause"]
    status: Literal["open", "closed"]
    summary_status: Literal["none", "pending", "running", "done", "failed"]
    opened_at: Stamp
    closed_at: Stamp | None


class SceneEvent(Event):
    """A scene closed (by the GM, a new place, a long pause) or opened; numbered, public."""

    audiences = ("frame", "spectators")
    type: Literal["scene.opened", "scene.closed"]
    scene: SceneBody
    seq: int


class SceneSummarized(Event):
    """A closed scene's summaries are written: to each seat's player its own character's
    summary (`summary`), to the GM every one (`summaries`, seat → text); the public
    summary to both. Unnumbered, like a narrative."""

    audiences = ("seat", "gm")
    type: Literal["scene.summarized"]
    scene: Uuid
    number: int
    public: str
    summary: str = optional()
    summaries: dict[str, str] = optional()


FRAME_EVENTS: tuple[type[Event], ...] = (
    OutcomeCreated,
    OutcomeReleased,
    OutcomeEdited,
    OutcomeDiscarded,
    FrameRewound,
    WindowEvent,
    WindowCancelled,
    SeatChanged,
    FrameStatusEvent,
    FrameUpdated,
    TalkCreated,
    ContentChanged,
    SkillAdded,
    Presence,
    PresenceAsk,
    ModelWaiting,
    LiquidEvent,
    PassFailed,
    NarrativeToken,
    NarrativeRestarted,
    NarrativeDone,
    OutcomeFlagged,
    LiquidFlagged,
    StateChanged,
    SceneEvent,
    SceneSummarized,
)
ALL_EVENTS: tuple[type[Event], ...] = PRODUCTION_EVENTS + FRAME_EVENTS


def events_json_schema() -> dict[str, Any]:
    """Every socket event's JSON Schema, for `make types` (json-schema-to-typescript):
    `ServerMessage` (a production's socket) and `FrameMessage` (a frame's) are unions of
    the event models, each a definition of its own."""
    from pydantic.json_schema import models_json_schema

    _, schema = models_json_schema(
        [(model, "serialization") for model in ALL_EVENTS], ref_template="#/$defs/{model}"
    )
    defs = schema["$defs"]

    def union(models: tuple[type[Event], ...]) -> dict[str, Any]:
        return {"anyOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in models]}

    defs["ServerMessage"] = union(PRODUCTION_EVENTS)
    defs["FrameMessage"] = union(FRAME_EVENTS)
    return {
        "title": "SocketEvent",
        "anyOf": [{"$ref": "#/$defs/ServerMessage"}, {"$ref": "#/$defs/FrameMessage"}],
        "$defs": defs,
    }
