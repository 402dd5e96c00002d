"""Productions (world + scenario + cast) and their turns, a tree of messages."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from lmix.models import NAME_MAX, Assistant, Owned, Scenario, World

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
    TurnStatus.STREAMING: {TurnStatus.DONE, TurnStatus.FAILED, TurnStatus.STOPPED},
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
    token_count = models.PositiveIntegerField(default=0)  # streamed deltas already in content
    status = models.CharField(max_length=16, choices=TurnStatus.choices)
    error = models.TextField(blank=True, default="")
    directive = models.JSONField(default=list, blank=True)  # exactly the messages sent
    model_id = models.CharField(max_length=NAME_MAX, blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["production", "status"])]

    def __str__(self) -> str:
        return f"{self.speaker_name}: {self.content[:40]}"

    @staticmethod
    def move(turn_id: object, to: str, *, only_from: tuple[str, ...] = (), **fields) -> bool:
        """Move a turn to status `to` if its lifecycle allows it from where it stands now
        (optionally only from `only_from`), setting `fields` too. One conditional update, so
        of two racing moves exactly one wins. Returns whether this one did."""
        sources = [s for s, targets in TURN_TRANSITIONS.items() if to in targets]
        if only_from:
            sources = [s for s in sources if s in only_from]
        if not sources:
            raise ValueError(f"No turn may become {to} from {only_from or 'anywhere'}.")
        return bool(
            Turn.objects.filter(pk=turn_id, status__in=sources).update(
                status=to, updated_at=timezone.now(), **fields
            )
        )
