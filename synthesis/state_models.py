"""Character state's records (DESIGN.md §5): each character's directed edges, mood and
learned facts, and memories, in a frame. Every change is a `StateDelta` row tied to the
outcome it came from (or to the GM who made it), so the state at any point is a fold of
deltas (synthesis/state/fold.py) and a rewind can be a filter; `Edge` and `SeatState` only
cache the fold's current values for the prompts. Registered through synthesis/models.py;
foreign keys by name, so this module imports nothing of the app's (no import cycle)."""

import uuid

from django.conf import settings
from django.db import models

from lmix.lifecycle import lifecycle_move

AFFINITY_START = 10  # strangers at first (the seed's levels: 0–20)
TRUST_START = 50
SIGNIFICANCE_MAX = 3  # 3 pins a memory


class DeltaKind(models.TextChoices):
    EDGE = "edge"  # affinity / trust / a fact about the target, source → target
    MOOD = "mood"  # the mood's name and intensity
    FACT = "fact"  # a fact the character learned
    RESET = "reset"  # the GM reset the character: back to where every character starts


class MemorySource(models.TextChoices):
    WITNESSED = "witnessed"
    TOLD = "told"


class StatePassStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


# A state pass is claimed running (created so, or taken over from a dead worker), then
# ends once: its changes and its end commit together.
STATE_PASS_TRANSITIONS: dict[str, set[str]] = {
    StatePassStatus.RUNNING: {StatePassStatus.DONE, StatePassStatus.FAILED},
    StatePassStatus.DONE: set(),
    StatePassStatus.FAILED: set(),
}


class StateDelta(models.Model):
    """One change of one character's state: the truth the caches fold from."""

    id = models.BigAutoField(primary_key=True)  # the fold's order
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    seat = models.ForeignKey(
        "synthesis.Seat", on_delete=models.CASCADE, related_name="state_deltas"
    )
    target = models.ForeignKey(
        "synthesis.Seat", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Null for the GM's edits (`by`); rewinding to an outcome hides the deltas of later ones.
    outcome = models.ForeignKey(
        "synthesis.Outcome", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=8, choices=DeltaKind.choices)
    affinity = models.SmallIntegerField(default=0)
    trust = models.SmallIntegerField(default=0)
    mood = models.CharField(max_length=20, blank=True, default="")  # "": keeps the mood
    intensity = models.FloatField(default=0.0)  # added to the mood's intensity
    text = models.TextField(blank=True, default="")  # an edge's or a learned fact
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["seat", "id"], name="state_delta_seat")]

    def __str__(self) -> str:
        return f"{self.kind} delta {self.pk}"


class Edge(models.Model):
    """How one character sees another now (the fold of its edge deltas, cached)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey("synthesis.Seat", on_delete=models.CASCADE, related_name="edges")
    target = models.ForeignKey("synthesis.Seat", on_delete=models.CASCADE, related_name="+")
    affinity = models.SmallIntegerField(default=AFFINITY_START)
    trust = models.SmallIntegerField(default=TRUST_START)
    knowledge = models.JSONField(default=list, blank=True)  # [str], facts about the target
    last_outcome = models.ForeignKey(
        "synthesis.Outcome", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_interaction_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["source", "target"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target"], name="one_edge_per_pair")
        ]

    def __str__(self) -> str:
        return f"edge {self.source_id} → {self.target_id}"


class SeatState(models.Model):
    """A character's mood and learned facts now (the fold of its deltas, cached)."""

    seat = models.OneToOneField(
        "synthesis.Seat", primary_key=True, on_delete=models.CASCADE, related_name="state"
    )
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    mood = models.CharField(max_length=20, default="neutral")
    intensity = models.FloatField(default=0.5)
    facts = models.JSONField(default=list, blank=True)  # [str], oldest first
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.mood} ({self.intensity:.1f})"


class Memory(models.Model):
    """What one character remembers of an outcome it witnessed (or was told of)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    seat = models.ForeignKey("synthesis.Seat", on_delete=models.CASCADE, related_name="memories")
    outcome = models.ForeignKey(
        "synthesis.Outcome", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    text = models.TextField()
    witnesses = models.JSONField(default=list, blank=True)  # seat ids, the outcome's
    source = models.CharField(
        max_length=10, choices=MemorySource.choices, default=MemorySource.WITNESSED
    )
    told_by = models.ForeignKey(
        "synthesis.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reliability = models.FloatField(default=1.0)
    significance = models.PositiveSmallIntegerField(default=1)  # 0–3
    pinned = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["seat", "-pinned", "-created_at"], name="memory_recall")]
        constraints = [
            models.UniqueConstraint(
                fields=["seat", "outcome"],
                condition=models.Q(source="witnessed"),
                name="one_witnessed_memory_per_outcome",
            ),
            models.CheckConstraint(
                condition=models.Q(significance__lte=SIGNIFICANCE_MAX), name="significance_0_3"
            ),
        ]

    def __str__(self) -> str:
        return self.text[:40]


class StatePass(models.Model):
    """The state pass of one outcome (synthesis/state/run.py): run once, after it."""

    outcome = models.OneToOneField(
        "synthesis.Outcome", primary_key=True, on_delete=models.CASCADE, related_name="state_pass"
    )
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=8, choices=StatePassStatus.choices, default=StatePassStatus.RUNNING
    )
    messages = models.JSONField(default=list, blank=True)  # what the call was sent
    tries = models.JSONField(default=list, blank=True)  # llm_structured's, for the GM
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"state pass {self.status}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        """A running state pass ends, done or failed (`STATE_PASS_TRANSITIONS`)."""
        return lifecycle_move(StatePass, STATE_PASS_TRANSITIONS, pk, to, **kwargs)
