"""Productions (world + scenario + cast) and their turns, a tree of messages."""

import secrets
import uuid

from django.conf import settings
from django.db import models

from lmix.lifecycle import lifecycle_move
from lmix.models import NAME_MAX, Assistant, LLMModel, Owned, Persona, Scenario, World

TURN_TEXT_MAX = 20_000


class Production(Owned):
    """A conversation container: who is in the cast and where the conversation stands."""

    name = models.CharField(max_length=NAME_MAX)
    world = models.ForeignKey(World, on_delete=models.PROTECT, related_name="productions")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="productions")
    assistants = models.ManyToManyField(Assistant, through="CastMember", related_name="productions")
    show_directive = models.BooleanField(default=False)
    head = models.ForeignKey(
        "Turn", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    autoplay_remaining = models.PositiveIntegerField(default=0)
    event_seq = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return self.name


class CastMember(models.Model):
    """An assistant's place in a production's cast (the order is the play-button order)."""

    production = models.ForeignKey(Production, on_delete=models.CASCADE, related_name="cast")
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["production", "assistant"], name="unique_cast_member")
        ]

    def __str__(self) -> str:
        return f"{self.assistant} in {self.production}"


class TurnStatus(models.TextChoices):
    PENDING = "pending"
    STREAMING = "streaming"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"


# The lifecycle of a turn: every allowed move, nothing else.
TURN_TRANSITIONS: dict[str, set[str]] = {
    TurnStatus.PENDING: {TurnStatus.STREAMING, TurnStatus.FAILED, TurnStatus.STOPPED},
    # Back to pending: its worker's lease lapsed, so it is generated again from the start.
    TurnStatus.STREAMING: {
        TurnStatus.DONE,
        TurnStatus.FAILED,
        TurnStatus.STOPPED,
        TurnStatus.PENDING,
    },
    TurnStatus.DONE: set(),
    TurnStatus.FAILED: set(),
    TurnStatus.STOPPED: set(),
}
ACTIVE_STATUSES = (TurnStatus.PENDING, TurnStatus.STREAMING)


class SpeakerKind(models.TextChoices):
    ASSISTANT = "assistant"
    DIRECTOR = "director"


class Turn(models.Model):
    """One message; `parent` makes a tree, so regenerating makes a sibling branch."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    production = models.ForeignKey(Production, on_delete=models.CASCADE, related_name="turns")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    depth = models.PositiveIntegerField(default=0)
    speaker_kind = models.CharField(max_length=16, choices=SpeakerKind.choices)
    assistant = models.ForeignKey(
        Assistant, null=True, blank=True, on_delete=models.SET_NULL, related_name="turns"
    )
    director = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    speaker_name = models.CharField(max_length=NAME_MAX)
    content = models.TextField(blank=True, default="")
    # Streamed deltas already in `content` (checkpointed, not written per token).
    token_count = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=TurnStatus.choices)
    error = models.TextField(blank=True, default="")
    directive = models.JSONField(default=list, blank=True)  # exactly the messages sent
    model_id = models.CharField(max_length=NAME_MAX, blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    # The lease of the worker generating it (see lmix/realtime/leases.py and docs/tasks.md).
    lease_owner = models.CharField(max_length=200, blank=True, default="")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)  # generation runs started
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["production", "status"])]

    def __str__(self) -> str:
        return f"{self.speaker_name}: {self.content[:40]}"

    @staticmethod
    def move(
        turn_id: object,
        to: str,
        *,
        only_from: tuple[str, ...] = (),
        where: dict | None = None,
        **fields,
    ) -> bool:
        """Move a turn to status `to` if its lifecycle allows it from where it stands now
        (optionally only from `only_from`, and only if it also matches `where`), setting
        `fields` too. One conditional update, so of two racing moves exactly one wins.
        Returns whether this one did.

        Raises:
            ValueError: no status may become `to` (an illegal move).
        """
        return lifecycle_move(
            Turn, TURN_TRANSITIONS, turn_id, to, only_from=only_from, where=where, **fields
        )


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


def new_invite_code() -> str:
    return secrets.token_urlsafe(12)


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

    def __str__(self) -> str:
        return self.name


class SeatController(models.TextChoices):
    OPEN = "open"  # nobody plays it yet: an invite code takes it
    HUMAN = "human"
    AI = "ai"


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

    class Meta:
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
