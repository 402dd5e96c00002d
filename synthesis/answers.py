"""The frames REST answers' shapes (lmix/answers.py): what synthesis/apis.py and its
neighbours send, built from the same bodies the socket events carry (event_types.py), so a
seat, a liquid or an outcome reads the same over REST and over a socket."""

from typing import Any, Literal

from pydantic import Field, RootModel

from lmix.realtime.wire import Body, Stamp, Uuid, json_object, object_of_strings, optional

from .event_types import (
    FLAGS,
    ContentBody,
    Flags,
    LiquidBody,
    NarrativeBody,
    OutcomeBody,
    SeatBody,
    TalkBody,
    WindowBody,
    stored,
)

FrameStatus = Literal["open", "paused", "closed"]
FrameMode = Literal["per_character", "shared"]
Controller = Literal["open", "human", "ai"]


class MySeat(Body):
    """The character the caller plays in a frame."""

    id: Uuid
    name: str
    avatar_url: str


class FrameSummary(Body):
    """A frame the caller runs or sits in."""

    id: Uuid
    name: str
    production: Uuid
    production_name: str
    status: FrameStatus
    mode: FrameMode
    is_gm: bool
    created_at: Stamp
    active_at: Stamp = Field(description="Its newest outcome or change (or its start).")
    my_seat: MySeat | None = Field(description="The character you play in it, if any.")
    waiting_for: list[str] = Field(
        description="While a round runs in an open frame: the player-held characters (by "
        "the names everyone knows) with no committed intention nor window yet."
    )
    my_turn: bool = Field(description="Your character is among `waiting_for`.")


class FrameList(RootModel[list[FrameSummary]]):
    """The frames the caller runs or sits in."""


class PlayedModel(Body):
    """A model a pass plays on, and why (`source`): the GM chose it for the frame, the
    character's assistant's, the cast's most common, the GM's default."""

    id: Uuid
    name: str
    source: Literal["frame", "assistant", "cast", "default"]


class FrameModels(Body):
    """The GM's model choices (null: the default rule) and the model each pass uses now."""

    soft_model: Uuid | None
    medium_model: Uuid | None
    soft: PlayedModel | None
    medium: dict[Uuid, PlayedModel | None] = Field(description="Seat id → its medium pass's model.")


class FrameBudget(Body):
    """The frame's model use this minute against its limits (0: no limit)."""

    calls: int
    calls_limit: int
    tokens: int
    tokens_limit: int
    ai_paused: bool = Field(description="AI seats and interrupt-woken passes wait.")
    players_paused: bool = Field(description="Players' windows wait too: the budget is spent.")
    waiting_windows: int = Field(description="Windows past their time, waiting for the budget.")
    rolls_in: int = Field(description="Seconds until this minute's count rolls on.")


class FrameView(Body):
    """The caller's view of a frame (the GM's holds everything). `seq` is read first: an
    event numbered after it may also be in the view, none before it can be missing."""

    id: Uuid
    production: Uuid
    name: str
    status: FrameStatus
    mode: FrameMode
    tempo: int | float
    liquid_visibility: Literal["all", "own", "gm"]
    player_faces: list[Literal["author", "designer"]]
    leak_guard: Literal["hold", "flag"] = Field(
        description="hold: an outcome the secret guard flags waits for the GM's review; "
        "flag: everyone reads it and the GM is warned."
    )
    second_opinion: bool = Field(
        description="A structured call backs the secret guard's word test (the GM's setting)."
    )
    seq: int
    is_gm: bool
    my_seats: list[Uuid]
    invite_code: str | None = Field(description="The GM's alone.")
    spectator_code: str | None = Field(description="While the GM allows spectators; the GM's.")
    liquid_flags: dict[Uuid, Flags] | None = Field(
        description="The guard's flags on AI-written intentions, by liquid id; the GM's.",
        json_schema_extra={
            "anyOf": [{"type": "object", "additionalProperties": FLAGS}, {"type": "null"}]
        },
    )
    seats: list[SeatBody]
    liquid: list[LiquidBody]
    outcomes: list[OutcomeBody]
    narratives: list[NarrativeBody]
    narrators: dict[str, str] = Field(
        description="By user id: the players who played the seats when narratives were written."
    )
    windows: list[WindowBody]
    talk: list[TalkBody] = Field(description="Table talk, oldest first (the newest 200).")
    content: list[ContentBody] = Field(description="World content, oldest first (the newest 200).")
    models: FrameModels = optional()  # the GM's view only
    budget: FrameBudget = optional()  # the GM's view only
    # The GM's view only: by seat id, the real name of each character who goes by another
    # (its public name is the seat's `name`).
    gm_names: dict[Uuid, str] = optional()


class SpectatorView(Body):
    """What a spectator sees: never liquid, a narrative or table talk."""

    id: Uuid
    name: str
    production_name: str
    status: FrameStatus
    mode: FrameMode
    tempo: int | float
    seq: int
    seats: list[SeatBody]
    outcomes: list[OutcomeBody]
    windows: list[WindowBody]


class InviteFrame(Body):
    id: Uuid
    name: str
    production_name: str
    status: FrameStatus
    mode: FrameMode


class InviteSeat(Body):
    """A seat as an invite shows it: the character's public face and universal truth."""

    id: Uuid
    persona: Uuid
    name: str
    avatar_url: str
    universal_truth: str
    controller: Controller
    player: str | None


class InvitePreview(Body):
    """What an invite offers a signed-in user before they take a seat."""

    frame: InviteFrame
    my_seat: Uuid | None = Field(description="The seat the caller already holds, if any.")
    seats: list[InviteSeat]


class InviteCode(Body):
    invite_code: str


class SpectatorCode(Body):
    spectator_code: str | None = Field(description="null: spectators are not allowed.")


class ActingSeats(Body):
    acting_seats: list[Uuid] = Field(description="The AI-played seats that act now.")


class OutcomeRegenerated(Body):
    """An outcome regenerated: the passes that run their bones again, and the rewind that
    hid the old outcome and what followed it (none for a held one, thrown away)."""

    passes: list["PassAccepted"]
    rewind: int | None = optional()


class PassAccepted(Body):
    id: Uuid
    status: Literal["pending", "running", "done", "failed", "held"]


class EpilogueBody(Body):
    """One epilogue of a closed scene: whose, where its writing stands, its text once done."""

    id: Uuid = Field(description="Its pass: the GM retries a failed one with its id.")
    seat: Uuid
    character: str = Field(description="Its character's name; 'The scene' in a shared frame.")
    status: Literal["pending", "running", "done", "failed", "held"]
    text: str
    narrative: Uuid | None = Field(description="The narrative it wrote, once done.")
    error: str = Field(description="Why it failed: the GM's only (empty for players).")


class EpilogueView(Body):
    """The epilogues of a closed scene the caller may read: the GM's all, a player's their
    own character's (a shared frame's one is everyone's)."""

    status: Literal["none", "writing", "failed", "done"] = Field(
        description="none: the scene closed without one (or is open); failed: any failed."
    )
    epilogues: list[EpilogueBody]


class WindowAnswer(Body):
    window: WindowBody


class FrameBanBody(Body):
    """A player the GM kicked: no seat of the frame until the GM allows them back."""

    user: int
    player: str
    banned_at: Stamp


class FrameBans(RootModel[list[FrameBanBody]]):
    """The frame's kicked players, oldest first."""


class LLMCallInfo(Body):
    purpose: str
    kind: str
    model_id: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int | None
    error: str
    finished_at: Stamp | None


MESSAGES = {"type": "array", "items": object_of_strings("role", "content")}
STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
REPAIR = json_object(["path", "given", "used"], path=STRING, given=NUMBER, used=NUMBER)


class PassInfo(Body):
    """A pass for its GM: what woke it, the exact messages each step sent (`messages`),
    each structured call's tries (what the provider was sent, its raw answer, why it was
    refused, which of its numbers were clamped into range to accept it), how it ended, and
    its LLM calls."""

    id: Uuid
    seat: Uuid | None  # null: the GM's own author or designer writing
    kind: Literal["soft", "medium", "epilogue", "author", "designer"]
    trigger: str
    status: Literal["pending", "running", "done", "failed", "held"]
    liquid: Uuid | None
    window: Uuid | None
    interrupt: dict[str, Any] | None = stored(
        {"anyOf": [object_of_strings("outcome", "reason"), {"type": "null"}]}
    )
    messages: list[dict[str, Any]] = stored(
        {
            "items": json_object(
                ["step", "messages"],
                step=STRING,
                attempt=INTEGER,
                messages=MESSAGES,
                # Which skills shaped the step's prompt (synthesis/medium/shaping.py).
                skills={
                    "type": "array",
                    "items": object_of_strings("id", "scope", "category", "name"),
                },
            )
        }
    )
    tries: list[dict[str, Any]] = stored(
        {
            "items": json_object(
                ["step", "attempt", "messages", "raw", "error"],
                step=STRING,
                attempt=INTEGER,
                mode=STRING,
                messages=MESSAGES,
                raw=STRING,
                error=STRING,
                # Numbers out of their bounds, clamped to accept the answer (lmix/llm/bounds.py).
                repaired={"type": "array", "items": REPAIR},
            )
        }
    )
    error: str
    attempts: int
    created_at: Stamp
    calls: list[LLMCallInfo]


class PassList(RootModel[list[PassInfo]]):
    """Every pass of the frame, oldest first."""


class FrameCall(Body):
    """One LLM call of a frame for its GM (synthesis/diagnostics.py): what it was for
    (`purpose`, and `label` in words), the pass it belongs to (`pass_id`, `pass_kind`), the
    outcome whose state pass made it (`outcome_id`) or the AI seat that acted, the seat's
    character (an outcome's: its actor), the model, tokens, latency (null while it runs),
    the recorded error, and its state: `cut_off` is a call whose worker died."""

    id: int
    purpose: str
    label: str
    kind: str
    pass_id: Uuid | None
    pass_kind: str | None  # a PassKind; not a Literal, so a new kind of pass never fails it
    outcome_id: Uuid | None  # a state pass's call: the outcome it updated the state after
    seat: Uuid | None
    character: str | None
    model_name: str | None  # null once the model was deleted
    model_id: str
    provider: str
    provider_label: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int | None
    error: str
    status: Literal["running", "done", "failed", "cut_off"]
    started_at: Stamp
    finished_at: Stamp | None


class FrameCallTotals(Body):
    """Every call of the frame, not only the page's."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    errors: int
    latency_ms: int
    unfinished: int


class QueuedCall(Body):
    """A call at a model's server (lmix/llm/slots.py): what it is for, and how long ago it
    asked. Any frame's: only its purpose shows."""

    label: str
    seconds: float


class ModelQueue(Body):
    """One of the frame's models whose server serves `slots` calls at once: what runs on
    it now and what waits, in the order they will go."""

    model: str
    slots: int
    running: list[QueuedCall]
    waiting: list[QueuedCall]


class FrameCalls(Body):
    """A page of the frame's LLM calls, newest first; `next_before` (the `before` of the
    next page) is null on the last page. `queues`: the frame's models that serve a few
    calls at a time, and what runs and waits on each now."""

    calls: list[FrameCall]
    next_before: int | None
    page_size: int
    totals: FrameCallTotals
    queues: list[ModelQueue]


class ExportOutcome(OutcomeBody):
    """An outcome in an export: `number` counts the frame's outcomes (1, 2, 3…), where
    `seq` counts every frame-wide event."""

    number: int


class ExportNarrative(NarrativeBody):
    """A narrative in an export: whose story it is (`character`, the seat's public name),
    who played the seat when it was written (`player`), the numbers of the outcomes it
    tells (`outcomes`) and the outcome it follows in the story (`after_outcome`, 0: before
    the first)."""

    character: str
    player: str | None
    outcomes: list[int]
    after_outcome: int


class FrameExport(Body):
    """A frame's story as one reader may keep it: the GM's holds every seat's narratives,
    every intention and the guard's flags; a player's the outcomes everyone sees, their
    own seats' narratives (and a shared frame's) and their own intentions."""

    frame: Uuid
    name: str
    production_name: str
    status: FrameStatus
    mode: FrameMode
    exported_at: Stamp
    reader: Literal["gm", "player"]
    my_seats: list[Uuid]
    seats: list[SeatBody]
    outcomes: list[ExportOutcome] = Field(description="Oldest first, numbered 1, 2, 3….")
    narratives: list[ExportNarrative] = Field(description="Oldest first.")
    intentions: list[LiquidBody] = Field(
        description="The GM's: every live intention; a player's: their own."
    )


class SheetSetting(Body):
    """The world or the scenario: shared by every character."""

    name: str
    description: str


class SheetSelf(Body):
    """The seat's own character: all of it is theirs to know."""

    name: str = Field(description="The real name.")
    public_name: str = Field(description="The name everyone else knows (its known_as).")
    avatar_url: str
    universal: str = Field(description="Who the character is to everyone.")
    internal: str = Field(description="The character's secret: only it knows.")
    external: str = Field(description="How the others see the character.")
    style: str


class SheetGroup(Body):
    """An affiliation as the character sees it: `internal` (the group's secret) only when
    the character is a member, empty otherwise."""

    name: str
    universal: str
    external: str
    internal: str
    covert: bool = Field(description="A covert membership: only fellow members know of it.")


class SheetOther(Body):
    """Another seat's character as this one knows it: its public face, its real name only
    where this character may know it, the groups this character sees it in."""

    seat: Uuid
    persona: Uuid
    public_name: str
    real_name: str | None = Field(description="Null: this character knows only the public name.")
    avatar_url: str
    universal: str
    external: str = Field(description="How this character sees them.")
    groups: list[SheetGroup]


class CharacterSheet(Body):
    """A seat's character sheet: exactly what its character's prompts may know of the
    setting, itself, its groups and the others (productions/knowledge.py::knowledge_of)."""

    seat: Uuid
    world: SheetSetting
    scenario: SheetSetting
    me: SheetSelf
    groups: list[SheetGroup]
    others: list[SheetOther]


class SkillBody(Body):
    """A skill the caller may read: the platform's (read-only), their own, or a frame's
    they run. `editable`: the caller may change or delete it here."""

    id: Uuid
    scope: Literal["platform", "frame", "user"]
    face: Literal["player", "author", "designer"]
    category: str
    name: str
    text: str
    guard: bool
    frame: Uuid | None
    editable: bool
    updated_at: Stamp


class SkillList(RootModel[list[SkillBody]]):
    """Skills by face, category and scope."""


class ContentList(RootModel[list[ContentBody]]):
    """The frame's world content, oldest first."""


class StateMood(Body):
    """A character's mood and the personality parameters it compiles to (0–1)."""

    name: str
    intensity: float
    parameters: dict[str, float]


class StateEdge(Body):
    """How this character sees another (directed: its own feelings, not theirs)."""

    target: Uuid
    name: str = Field(description="The other character's public name.")
    affinity: int = Field(description="0–100.")
    trust: int = Field(description="0–100.")
    level: Literal["stranger", "acquaintance", "friend", "close friend", "soulmate"]
    knowledge: list[str] = Field(description="What this character knows about the other.")
    last_outcome_seq: int | None
    last_interaction_at: Stamp | None


class StateMemory(Body):
    """One of this character's memories: only of what it witnessed or was told."""

    id: Uuid
    text: str
    outcome: Uuid | None
    # A plain string: a second choice set named `source` would rename the first's enum.
    source: str = Field(description='"witnessed", or "told" (by `told_by`).')
    told_by: str | None
    reliability: float
    significance: int = Field(description="0 trivial … 3 unforgettable (pinned).")
    pinned: bool
    created_at: Stamp


class SeatStateAnswer(Body):
    """A seat's character state (synthesis/state/): its relationships, mood, learned facts
    and newest memories. Its player's and the GM's only."""

    seat: Uuid
    mood: StateMood
    facts: list[str]
    edges: list[StateEdge]
    memories: list[StateMemory] = Field(description="Newest first.")
    last_failure: str | None = Field(
        default=None, description="The GM's only: why the frame's last failed state pass failed."
    )


class CastEdge(Body):
    """How one cast member sees another, at the production's head."""

    target: Uuid = Field(description="The other member's assistant.")
    name: str = Field(description="The other member's public name.")
    affinity: int = Field(description="0–100.")
    trust: int = Field(description="0–100.")
    level: Literal["stranger", "acquaintance", "friend", "close friend", "soulmate"]
    knowledge: list[str]


class CastMemory(Body):
    """A cast member's memory of a turn on the head's branch."""

    id: Uuid
    text: str
    turn: Uuid
    significance: int = Field(description="0 trivial … 3 unforgettable (pinned).")
    pinned: bool


class CastMemberState(Body):
    assistant: Uuid
    name: str = Field(description="The member's public name.")
    mood: StateMood
    facts: list[str]
    edges: list[CastEdge]
    memories: list[CastMemory] = Field(description="Newest first.")


class ProductionStateAnswer(Body):
    """The cast's character state at the production's head (synthesis/state/productions.py):
    the fold of the branch's turns only. Its owner's."""

    members: list[CastMemberState]
    last_failure: str | None = Field(description="Why the last failed state pass failed.")


RewindKind = Literal["rewind", "regenerate", "restore"]


class RewindRow(Body):
    """One row a rewind would hide, as the GM's dry run lists it."""

    id: str
    seat: str = optional()
    text: str = optional()
    seq: int = optional()
    held: bool = optional()
    kind: str = optional()


class RewindPreview(Body):
    """The dry run of a rewind: how many rows of each kind it hides, and (up to 200 of
    each) which. Counts: outcomes, narratives, liquid, memories, state_deltas, passes,
    state_passes."""

    to_seq: int
    counts: dict[str, int]
    outcomes: list[RewindRow]
    narratives: list[RewindRow]
    liquid: list[RewindRow]
    memories: list[RewindRow]
    state_deltas: list[RewindRow]


class RegenerateInput(Body):
    """An intention the outcome resolved, as its player wrote it."""

    liquid: Uuid
    seat: Uuid
    content: str


class RegeneratePreview(RewindPreview):
    """The dry run of a regenerate: what goes (the outcome and everything after it) and
    the intentions the GM may rewrite first."""

    inputs: list[RegenerateInput]


class RewindEdit(Body):
    """An intention the GM rewrote before regenerating: who is `by`, when `created_at`."""

    liquid: Uuid
    seat: Uuid
    before: str
    after: str


class RewindAnswer(Body):
    """A rewind of the frame (the GM's): to which outcome, by whom, what it hid (counts),
    the regenerate's edits, and whether it was restored or can be now (the newest standing
    one can)."""

    id: int
    kind: RewindKind
    to_seq: int
    to_outcome: Uuid | None
    by: str | None
    created_at: Stamp
    counts: dict[str, int]
    edits: list[RewindEdit]
    restored_at: Stamp | None
    restored_by: str | None
    restorable: bool


class RewindList(Body):
    rewinds: list[RewindAnswer]
