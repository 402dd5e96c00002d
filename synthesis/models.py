"""The frames engine's records: liquid (submitted intentions), windows (per-character
timers), passes (soft and medium LLM work), outcomes (shared bones) and narratives
(personal flesh). Every lifecycle is a transition table moved with `lifecycle_move`."""

import secrets
import uuid

from django.conf import settings
from django.db import models

from authoring.models import Assistant, Persona
from lmix.lifecycle import lifecycle_move
from lmix.models import JOB_TRANSITIONS, NAME_MAX, JobStatus, Leased, LLMModel, Owned
from productions.models import Production

from .rewind_models import Every, Rewind, RewindKind, Visible, rewound_field  # noqa: F401

LIQUID_MAX = 4000


class FrameStatus(models.TextChoices):
    OPEN = "open"
    PAUSED = "paused"
    CLOSED = "closed"


class FrameMode(models.TextChoices):
    PER_CHARACTER = "per_character"  # 0.7.5: each character's own window and narrative
    SHARED = "shared"  # 0.7: one synthesis per commit for everyone, under a frame lock


class LiquidVisibility(models.TextChoices):
    ALL = "all"  # everyone in the frame reads everyone's submitted intentions
    OWN = "own"  # players read their own; others see that something was submitted
    GM = "gm"  # like OWN, and said so to the players: only the GM reads them all


class Face(models.TextChoices):
    """The role one writes in (DESIGN.md): acting through a character, adding world
    content, or writing skills."""

    PLAYER = "player"
    AUTHOR = "author"
    DESIGNER = "designer"


# The faces the GM may open to players (the GM may always write in every face).
EXTRA_FACES = (Face.AUTHOR, Face.DESIGNER)


class LeakGuard(models.TextChoices):
    """What the secret guard does with an outcome that may reveal a secret (synthesis/guard.py,
    docs/synthesis.md "The secret guard")."""

    HOLD = "hold", "Hold outcomes that may reveal a secret until I review them"
    FLAG = "flag", "Show them and flag them to me"


def new_invite_code() -> str:
    return secrets.token_urlsafe(12)


FRAME_TRANSITIONS: dict[str, set[str]] = {
    FrameStatus.OPEN: {FrameStatus.PAUSED, FrameStatus.CLOSED},
    FrameStatus.PAUSED: {FrameStatus.OPEN, FrameStatus.CLOSED},
    FrameStatus.CLOSED: set(),  # closed for good
}


class Frame(Owned):
    """A live multiplayer scene of a production; its owner is the GM."""

    production = models.ForeignKey(Production, on_delete=models.CASCADE, related_name="frames")
    name = models.CharField(max_length=NAME_MAX)
    status = models.CharField(max_length=16, choices=FrameStatus.choices, default="open")
    mode = models.CharField(max_length=16, choices=FrameMode.choices, default="per_character")
    tempo = models.FloatField(default=1.0)  # multiplies every window; 0 fires at once
    liquid_visibility = models.CharField(
        max_length=8, choices=LiquidVisibility.choices, default="all"
    )
    soft_model = models.ForeignKey(
        LLMModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    medium_model = models.ForeignKey(
        LLMModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    invite_code = models.CharField(max_length=32, unique=True, default=new_invite_code)
    # A link to watch the outcomes only, while the GM allows it (None: no spectators).
    spectator_code = models.CharField(max_length=32, unique=True, null=True, blank=True)
    seq = models.BigIntegerField(default=0)  # the last frame-wide event's number
    # Which faces besides `player` the players may write in (a subset of EXTRA_FACES).
    player_faces = models.JSONField(default=list, blank=True)
    leak_guard = models.CharField(max_length=8, choices=LeakGuard.choices, default="hold")
    # A structured call backs the word-overlap guard: one more call per outcome with
    # secrets left unflagged, before it reaches anyone (synthesis/guard_opinion.py).
    second_opinion = models.BooleanField(default=False)
    # The open scene's start (synthesis/scenes/): gather keeps older outcomes and narratives
    # out of prompts, which carry the older scenes' summaries instead.
    scene_seq = models.BigIntegerField(default=0)
    scene_at = models.DateTimeField(null=True, blank=True)

    class Meta(Owned.Meta):
        db_table = "productions_frame"  # born in productions/ (migration 0007 moved it)

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        """The GM pauses, resumes and closes a frame (`FRAME_TRANSITIONS`)."""
        return lifecycle_move(Frame, FRAME_TRANSITIONS, pk, to, **kwargs)


class SeatController(models.TextChoices):
    OPEN = "open"  # nobody plays it yet: an invite code takes it
    HUMAN = "human"
    AI = "ai"


class AiReacts(models.TextChoices):
    """When an AI-played seat acts on its own after an outcome (`ai_seats.ai_react`); the
    GM's "advance" moves it whatever this says."""

    ALWAYS = "always", "Always: any outcome it witnessed"
    ADDRESSED = "addressed", "When addressed: outcomes that name, address or resolve it"
    GM = "gm", "Only when the GM advances the frame"


class Seat(models.Model):
    """A character in a frame and who plays it: a user, an assistant, or nobody yet."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="seats")
    persona = models.ForeignKey(Persona, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField(default=0)
    controller = models.CharField(max_length=8, choices=SeatController.choices, default="open")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    assistant = models.ForeignKey(
        Assistant, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ai_reacts = models.CharField(
        max_length=10, choices=AiReacts.choices, default=AiReacts.ADDRESSED
    )

    class Meta:
        db_table = "productions_seat"
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["frame", "persona"], name="one_seat_per_persona"),
            models.UniqueConstraint(
                fields=["frame", "user"],
                condition=models.Q(user__isnull=False),
                name="one_seat_per_user",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(controller="open", user__isnull=True, assistant__isnull=True)
                    | models.Q(controller="human", user__isnull=False, assistant__isnull=True)
                    | models.Q(controller="ai", user__isnull=True, assistant__isnull=False)
                ),
                name="seat_controller_matches_player",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.persona} in {self.frame}"


class FrameBan(models.Model):
    """A player the GM removed from a frame: they take no seat of it again until the GM
    lifts the ban (`synthesis/frames.py`: `seat_update`, `frame_join`)."""

    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="bans")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "productions_frameban"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["frame", "user"], name="one_ban_per_frame_user")
        ]

    def __str__(self) -> str:
        return f"user {self.user_id} banned from {self.frame}"


class LiquidStatus(models.TextChoices):
    SUBMITTED = "submitted"  # revisable
    COMMITTED = "committed"  # in a window, waiting for its medium pass
    CONSUMED = "consumed"  # narrated by a solid: never narrated again
    WITHDRAWN = "withdrawn"


LIQUID_TRANSITIONS: dict[str, set[str]] = {
    LiquidStatus.SUBMITTED: {LiquidStatus.COMMITTED, LiquidStatus.WITHDRAWN},
    # Back to submitted only when the GM cancels its window: the player revises, commits anew.
    LiquidStatus.COMMITTED: {LiquidStatus.CONSUMED, LiquidStatus.SUBMITTED},
    LiquidStatus.CONSUMED: set(),
    LiquidStatus.WITHDRAWN: set(),
}


class WindowStatus(models.TextChoices):
    OPEN = "open"  # counting down to expires_at (or frozen while the frame is paused)
    FIRING = "firing"  # claimed: its medium pass runs
    FIRED = "fired"
    CANCELLED = "cancelled"  # an interrupt woke the character early
    FAILED = "failed"  # its pass failed; the GM can retry


WINDOW_TRANSITIONS: dict[str, set[str]] = {
    WindowStatus.OPEN: {WindowStatus.FIRING, WindowStatus.CANCELLED},
    WindowStatus.FIRING: {WindowStatus.FIRED, WindowStatus.FAILED},
    WindowStatus.FAILED: {WindowStatus.FIRING},  # a retry
    WindowStatus.FIRED: set(),
    WindowStatus.CANCELLED: set(),
}


class PassKind(models.TextChoices):
    SOFT = "soft"
    MEDIUM = "medium"
    EPILOGUE = "epilogue"  # a closing narrative once the scene closed (synthesis/epilogue.py)
    # An author's or a designer's committed writing made a content entry or a frame skill
    # (synthesis/faces/).
    AUTHOR = "author"
    DESIGNER = "designer"


class Trigger(models.TextChoices):
    SUBMIT = "submit"
    EDIT = "edit"
    EXPIRY = "expiry"
    INTERRUPT = "interrupt"
    COMMIT = "commit"
    ADVANCE = "advance"
    GM = "gm"  # the GM's own words: a narration or a private note (synthesis/gm_voice.py)
    EPILOGUE = "epilogue"  # the GM closed the scene with an epilogue (synthesis/epilogue.py)


class PassStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    # Its outcome (or the one that resolved its liquid) is held for the GM's review
    # (`waiting_on`): no worker holds it, no sweep touches it, its narrative waits.
    HELD = "held"


PASS_TRANSITIONS: dict[str, set[str]] = {
    PassStatus.PENDING: {PassStatus.RUNNING, PassStatus.FAILED},
    # Back to pending: its worker's lease lapsed (docs/tasks.md), or a GM retry.
    PassStatus.RUNNING: {PassStatus.DONE, PassStatus.FAILED, PassStatus.PENDING, PassStatus.HELD},
    PassStatus.FAILED: {PassStatus.PENDING},
    # Released (it keeps its outcome and goes on to its narrative) or regenerated (its
    # bones run again): pending either way, its task enqueued (synthesis/outcomes.py).
    PassStatus.HELD: {PassStatus.PENDING},
    PassStatus.DONE: set(),
}


class Liquid(models.Model):
    """A submitted intention for a seat (the player face), or an author's or designer's
    writing (`face`; synthesis/faces/): revisable until committed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="liquid")
    # None: the GM writing as an author or a designer (a face that acts through no seat).
    seat = models.ForeignKey(
        Seat, null=True, blank=True, on_delete=models.CASCADE, related_name="liquid"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )  # the player, the GM for an AI seat, or none when the seat's assistant wrote it
    face = models.CharField(max_length=8, choices=Face.choices, default=Face.PLAYER)
    content = models.TextField(max_length=LIQUID_MAX)
    # An author's or designer's liquid: its pass {pass}, then what it made {kind, id, name,
    # edited|replaced} or why it failed {error} (readable by the writer: synthesis/faces/).
    result = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=LiquidStatus.choices, default="submitted")
    revision = models.PositiveIntegerField(default=1)  # a soft result for an older one is dropped
    window = models.ForeignKey(
        "Window", null=True, blank=True, on_delete=models.SET_NULL, related_name="liquid"
    )
    consumed_by = models.ForeignKey(
        "Narrative", null=True, blank=True, on_delete=models.SET_NULL, related_name="consumed"
    )
    # The soft pass's analysis (or the heuristics', when the model failed: `analysis_source`).
    pscale = models.SmallIntegerField(null=True, blank=True)
    window_seconds = models.FloatField(null=True, blank=True)
    interruptive = models.BooleanField(default=False)
    targets = models.JSONField(default=list, blank=True)  # seat ids
    capable = models.BooleanField(null=True, blank=True)
    capable_reason = models.TextField(blank=True, default="")
    refined = models.TextField(blank=True, default="")
    analysis_source = models.CharField(max_length=16, blank=True, default="")  # model/heuristic
    analysis_note = models.TextField(blank=True, default="")
    # The secret guard's, for the GM only: what an AI seat's intention gave away.
    flags = models.JSONField(default=list, blank=True)
    # An AI seat's intention the guard flagged in a frame that holds: submitted, not
    # committed, its words the GM's alone until the GM releases (commits), edits or
    # regenerates it (synthesis/ai_seats.py, docs/synthesis.md "The secret guard").
    held = models.BooleanField(default=False)
    submitted_at = models.DateTimeField(auto_now_add=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["submitted_at", "id"]
        indexes = [models.Index(fields=["frame", "status"])]

    def __str__(self) -> str:
        return f"{self.status}: {self.content[:40]}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        return lifecycle_move(Liquid, LIQUID_TRANSITIONS, pk, to, **kwargs)


class Window(models.Model):
    """A character's timer: opened by a commit, it wakes the medium pass when it expires."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="windows")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="windows")
    status = models.CharField(max_length=16, choices=WindowStatus.choices, default="open")
    pscale = models.SmallIntegerField(default=-1)
    opened_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)  # None while the frame is paused
    remaining_seconds = models.FloatField(null=True, blank=True)  # kept while paused
    trigger = models.CharField(max_length=16, choices=Trigger.choices, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["opened_at", "id"]
        indexes = [models.Index(fields=["status", "expires_at"])]
        constraints = [
            # One open window gathers a seat's commits; a commit while the seat's pass
            # runs (its window firing) opens the next one.
            models.UniqueConstraint(
                fields=["seat"],
                condition=models.Q(status="open"),
                name="one_open_window_per_seat",
            )
        ]

    def __str__(self) -> str:
        return f"window {self.status} until {self.expires_at}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        return lifecycle_move(Window, WINDOW_TRANSITIONS, pk, to, **kwargs)


class Pass(models.Model):
    """One soft, medium or epilogue pass: what woke it, the exact messages sent, how it ended."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="passes")
    # None: an author or designer pass of the GM's own writing (no seat).
    seat = models.ForeignKey(
        Seat, null=True, blank=True, on_delete=models.CASCADE, related_name="passes"
    )
    kind = models.CharField(max_length=8, choices=PassKind.choices)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    status = models.CharField(max_length=16, choices=PassStatus.choices, default="pending")
    liquid = models.ForeignKey(
        Liquid, null=True, blank=True, on_delete=models.CASCADE, related_name="passes"
    )  # the soft pass's subject
    liquid_revision = models.PositiveIntegerField(default=0)  # the revision it analyzes
    window = models.ForeignKey(
        Window, null=True, blank=True, on_delete=models.CASCADE, related_name="passes"
    )  # the medium pass's window
    interrupt = models.JSONField(default=dict, blank=True)  # {outcome, reason} for an interrupt
    messages = models.JSONField(default=list, blank=True)  # exactly what was sent, per call
    # Every structured model call: the messages as the provider sent them, the raw answer,
    # why it was refused ({step, attempt, mode, messages, raw, error}). The GM's only.
    tries = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True, default="")
    lease_owner = models.CharField(max_length=200, blank=True, default="")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # While held: the held outcome it waits for (its own, or the one that resolved its liquid).
    waiting_on = models.ForeignKey(
        "Outcome", null=True, blank=True, on_delete=models.SET_NULL, related_name="waiting"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "passes"
        indexes = [models.Index(fields=["status", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind} pass ({self.trigger}, {self.status})"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        return lifecycle_move(Pass, PASS_TRANSITIONS, pk, to, **kwargs)

    @staticmethod
    def retry(pk: object) -> bool:
        """A failed pass pending again for the GM's retry (medium, epilogue, author,
        designer): its error and lease cleared, and its own restarts after a dead worker."""
        return Pass.move(
            pk,
            PassStatus.PENDING,
            only_from=(PassStatus.FAILED,),
            error="",
            lease_owner="",
            heartbeat_at=None,
            attempts=0,
        )


class Outcome(models.Model):
    """Shared bones: what objectively happened, numbered with the frame's seq."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="outcomes")
    seq = models.BigIntegerField()
    # The seat whose pass produced it; null for the GM's narration (synthesis/gm_voice.py).
    seat = models.ForeignKey(
        Seat, null=True, blank=True, on_delete=models.CASCADE, related_name="outcomes"
    )
    source_pass = models.OneToOneField(
        Pass, null=True, blank=True, on_delete=models.SET_NULL, related_name="outcome"
    )
    actions_resolved = models.JSONField(default=list)  # [{seat, action, result}]
    world_facts = models.JSONField(default=list)  # [str]
    interrupts = models.JSONField(default=list)  # [{seat, reason}]
    witnesses = models.JSONField(default=list)  # seat ids, computed by the server
    liquid_ids = models.JSONField(default=list)  # the committed liquid it resolved
    flags = models.JSONField(default=list)  # the secret guard's, for the GM only
    # Flagged in a frame that holds: only the GM reads it until released (docs/synthesis.md).
    held = models.BooleanField(default=False)
    # Where the characters are after it, if the outcome moved them (the bones' `location`):
    # a new place closes the scene (synthesis/scenes/services.py::scene_after_outcome).
    location = models.CharField(max_length=120, blank=True, default="")
    released_at = models.DateTimeField(null=True, blank=True)
    released_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_at = models.DateTimeField(null=True, blank=True)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["frame", "seq"], name="one_outcome_per_frame_seq")
        ]

    def __str__(self) -> str:
        return f"outcome {self.seq}"


class NarrativeStatus(models.TextChoices):
    STREAMING = "streaming"
    DONE = "done"
    FAILED = "failed"


NARRATIVE_TRANSITIONS: dict[str, set[str]] = {
    # A run after a failed or lost one writes a new narrative (the old one is deleted).
    NarrativeStatus.STREAMING: {NarrativeStatus.DONE, NarrativeStatus.FAILED},
    NarrativeStatus.DONE: set(),
    NarrativeStatus.FAILED: set(),
}


class Narrative(models.Model):
    """Flesh (a solid of the player face): one character's prose for its player, or, in a
    shared frame, the scene's one prose for everyone (`shared`, written from public
    knowledge only)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="narratives")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="narratives")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_pass = models.OneToOneField(
        Pass, null=True, blank=True, on_delete=models.SET_NULL, related_name="narrative"
    )
    text = models.TextField(blank=True, default="")
    token_count = models.PositiveIntegerField(default=0)  # streamed deltas already in text
    outcome_ids = models.JSONField(default=list)
    liquid_ids = models.JSONField(default=list)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    pscale = models.SmallIntegerField(default=-1)
    shared = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=NarrativeStatus.choices, default="streaming")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.status}: {self.text[:40]}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        return lifecycle_move(Narrative, NARRATIVE_TRANSITIONS, pk, to, **kwargs)


TALK_MAX = 1000
GM_TEXT_MAX = 2000  # a narration or a private note of the GM (synthesis/gm_voice.py)


class TalkKind(models.TextChoices):
    """A table-talk row: something said, or a notice of who came and went (no text: the
    page writes it from `author`, the player it is about, and the seat's public name)."""

    SAY = "say"
    JOIN = "join"  # a player took the seat (frame_join)
    LEAVE = "leave"  # its player gave it up (seat_leave)
    KICK = "kick"  # the GM took it from its player (seat_update)


class TableTalk(models.Model):
    """An out-of-character message at the table (players and the GM), or a notice that a
    player joined, left or was removed: shown to everyone in the frame, never read by any
    pass."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="table_talk")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    seat = models.ForeignKey(Seat, null=True, blank=True, on_delete=models.SET_NULL)
    by_gm = models.BooleanField(default=False)
    kind = models.CharField(max_length=8, choices=TalkKind.choices, default=TalkKind.SAY)
    text = models.TextField(max_length=TALK_MAX, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.text[:40] or self.kind


class SkillScope(models.TextChoices):
    PLATFORM = "platform"  # ships with LMiX (synthesis/skills/files/), edited in the admin
    FRAME = "frame"  # the frame's GM's, for every pass of that frame
    USER = "user"  # a player's own, for the passes of their own character


SKILL_TEXT_MAX = 4000
CATEGORY_MAX = 40


class Skill(models.Model):
    """A prompt document that shapes a pass of one face (synthesis/skills/). Within one
    category of a face the most specific scope wins (user over frame over platform); a
    guard skill, the rules that keep secrets and agency, is platform-only and always
    applies."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scope = models.CharField(max_length=8, choices=SkillScope.choices)
    face = models.CharField(max_length=8, choices=Face.choices)
    category = models.SlugField(max_length=CATEGORY_MAX)
    name = models.CharField(max_length=NAME_MAX)
    text = models.TextField(max_length=SKILL_TEXT_MAX)
    guard = models.BooleanField(default=False)
    frame = models.ForeignKey(
        Frame, null=True, blank=True, on_delete=models.CASCADE, related_name="skills"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    # A platform skill's file (its key) and the text that file last shipped: a sync takes a
    # new file's text unless an admin has edited the skill since.
    key = models.SlugField(max_length=80, blank=True, default="")
    shipped = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["face", "category", "scope", "created_at"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(scope="platform", frame__isnull=True, owner__isnull=True)
                    | models.Q(scope="frame", frame__isnull=False, owner__isnull=True, guard=False)
                    | models.Q(scope="user", frame__isnull=True, owner__isnull=False, guard=False)
                ),
                name="skill_scope_matches_target",
            ),
            models.UniqueConstraint(
                fields=["key"],
                condition=models.Q(scope="platform"),
                name="one_platform_skill_per_key",
            ),
            models.UniqueConstraint(
                fields=["frame", "face", "category"],
                condition=models.Q(scope="frame"),
                name="one_frame_skill_per_category",
            ),
            models.UniqueConstraint(
                fields=["owner", "face", "category"],
                condition=models.Q(scope="user"),
                name="one_user_skill_per_category",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.face}/{self.category}: {self.name}"


class ContentType(models.TextChoices):
    LOCATION = "location"
    NPC = "npc"
    ITEM = "item"
    EVENT = "event"
    LORE = "lore"


CONTENT_FIELD_MAX = 2000  # one field of an entry's data (its description, say)
CONTENT_FIELDS_MAX = 12


class Content(models.Model):
    """World content of a frame (a solid of the author face): a location, an NPC, an item,
    an event or lore, added by the GM (or, later, structured from an author's writing).
    Everyone at the table reads it, and later passes gather it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="content")
    type = models.CharField(max_length=16, choices=ContentType.choices)
    name = models.CharField(max_length=NAME_MAX)
    data = models.JSONField(default=dict)  # {field: text}, `description` always
    pscale = models.SmallIntegerField(default=0)  # the scale at which it matters, −3 … +2
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_at = models.DateTimeField(null=True, blank=True)
    # The author-face liquid it was made from (synthesis/faces/); None: the GM added it.
    source_liquid = models.ForeignKey(
        "Liquid", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "content"

    def __str__(self) -> str:
        return f"{self.type}: {self.name}"


class SeatAct(Leased):
    """An AI seat's act (ai_seats.py): its assistant writes an intention and commits it,
    once, under a lease, so a worker killed while the character "types" is replaced by the
    next one without the GM (docs/tasks.md)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="acts")
    # The outcome it reacts to; none for the GM's advance (or a regenerated intention).
    outcome = models.ForeignKey(
        "Outcome", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=8, choices=JobStatus.choices, default=JobStatus.PENDING)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # The sweep's: acts not ended (docs/tasks.md).
        indexes = [
            models.Index(
                fields=["updated_at"],
                name="seat_act_live",
                condition=models.Q(status__in=[JobStatus.PENDING, JobStatus.RUNNING]),
            )
        ]

    def __str__(self) -> str:
        return f"act of {self.seat_id} {self.status}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        return lifecycle_move(SeatAct, JOB_TRANSITIONS, pk, to, **kwargs)


# Character state's, scenes' and snapshots' records live in their own modules; importing
# them here registers them.
from .scene_models import Scene, SceneReason, SceneStatus, SceneSummary, SummaryStatus  # noqa: E402, F401, I001
from .snapshot_models import Snapshot, SnapshotKind  # noqa: E402, F401
from .state_models import (  # noqa: E402, F401
    DeltaKind,
    Edge,
    Memory,
    MemoryEdit,
    MemorySource,
    SeatState,
    SignificancePass,
    StateDelta,
    StatePass,
    StatePassStatus,
    TurnStatePass,
)
