"""Character state's records (DESIGN.md §5): each character's directed edges, mood and
learned facts, and memories, in a frame. Every change is a `StateDelta` row tied to the
outcome it came from (or to the GM who made it), so the state at any point is a fold of
deltas (synthesis/state/fold.py) and a rewind can be a filter; `Edge` and `SeatState` only
cache the fold's current values for the prompts. Registered through synthesis/models.py;
foreign keys by name, so this module imports nothing of the app's (no import cycle).

A production's cast has the same rows, keyed by `turn` and `member` (the cast member's
assistant) instead of frame and seat: no cache, since the state at a turn is the fold of
the deltas of its branch (synthesis/state/productions.py), which the head picks."""

import uuid

from django.conf import settings
from django.db import models

from lmix.lifecycle import lifecycle_move
from lmix.models import JOB_TRANSITIONS, JobStatus, Leased

from .rewind_models import Every, Visible, rewound_field

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


# A state pass is a job (lmix/realtime/leases.py): created pending with its outcome (or
# turn), claimed under a lease, ended once (its changes and its end commit together), back
# to pending when its worker died.
StatePassStatus = JobStatus
STATE_PASS_TRANSITIONS = JOB_TRANSITIONS
LIVE = models.Q(status__in=[JobStatus.PENDING, JobStatus.RUNNING])


class StateDelta(models.Model):
    """One change of one character's state: the truth the caches fold from."""

    id = models.BigAutoField(primary_key=True)  # the fold's order
    # A frame's character (frame, seat, target), or a production's (turn, member, toward).
    frame = models.ForeignKey(
        "synthesis.Frame", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    seat = models.ForeignKey(
        "synthesis.Seat",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="state_deltas",
    )
    target = models.ForeignKey(
        "synthesis.Seat", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    turn = models.ForeignKey(
        "productions.Turn", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    member = models.ForeignKey(
        "authoring.Assistant", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    toward = models.ForeignKey(
        "authoring.Assistant", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
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

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["seat", "id"], name="state_delta_seat"),
            models.Index(fields=["member", "turn"], name="state_delta_member"),
        ]

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
    # How the source sees the target, in a sentence, as of the last closed scene (written
    # by the scene's summary pass: synthesis/scenes/run.py); the source's alone.
    summary = models.TextField(blank=True, default="")

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
    # A frame's character (frame, seat, outcome), or a production's (turn, member).
    frame = models.ForeignKey(
        "synthesis.Frame", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    seat = models.ForeignKey(
        "synthesis.Seat", null=True, blank=True, on_delete=models.CASCADE, related_name="memories"
    )
    outcome = models.ForeignKey(
        "synthesis.Outcome", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    turn = models.ForeignKey(
        "productions.Turn", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    member = models.ForeignKey(
        "authoring.Assistant", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    text = models.TextField()
    witnesses = models.JSONField(default=list, blank=True)  # seat (or assistant) ids
    source = models.CharField(
        max_length=10, choices=MemorySource.choices, default=MemorySource.WITNESSED
    )
    told_by = models.ForeignKey(
        "synthesis.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reliability = models.FloatField(default=1.0)
    significance = models.PositiveSmallIntegerField(default=1)  # 0–3
    pinned = models.BooleanField(default=False)
    # The GM's delete: kept (its edits audited, `MemoryEdit`), never recalled nor shown.
    removed = models.BooleanField(default=False)
    scored = models.BooleanField(default=False)  # the significance pass has weighed it
    created_at = models.DateTimeField(auto_now_add=True)

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["seat", "-pinned", "-created_at"], name="memory_recall")]
        constraints = [
            models.UniqueConstraint(
                fields=["seat", "outcome"],
                condition=models.Q(source="witnessed"),
                name="one_witnessed_memory_per_outcome",
            ),
            models.UniqueConstraint(
                fields=["member", "turn"],
                condition=models.Q(turn__isnull=False),
                name="one_memory_per_turn",
            ),
            models.CheckConstraint(
                condition=models.Q(significance__lte=SIGNIFICANCE_MAX), name="significance_0_3"
            ),
        ]

    def __str__(self) -> str:
        return self.text[:40]


class MemoryEdit(models.Model):
    """The GM's change to a memory (pin, significance, text, removal), kept for audit:
    {field: [before, after]}. A memory is not a delta (it is no fold's term), so its edits
    are recorded here instead."""

    id = models.BigAutoField(primary_key=True)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="edits")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    change = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"memory edit {self.pk}"


class StatePass(Leased):
    """The state pass of one outcome (synthesis/state/run.py): run once, after it."""

    outcome = models.OneToOneField(
        "synthesis.Outcome", primary_key=True, on_delete=models.CASCADE, related_name="state_pass"
    )
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=8, choices=StatePassStatus.choices, default=StatePassStatus.PENDING
    )
    messages = models.JSONField(default=list, blank=True)  # what the call was sent
    tries = models.JSONField(default=list, blank=True)  # llm_structured's, for the GM
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    rewound = rewound_field()  # hidden by a rewind (rewind_models.py)

    objects = Visible()
    all_objects = Every()

    class Meta:
        # The sweep's: work not ended (docs/tasks.md).
        indexes = [models.Index(fields=["updated_at"], name="state_pass_live", condition=LIVE)]

    def __str__(self) -> str:
        return f"state pass {self.status}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        """A running state pass ends, done or failed (`STATE_PASS_TRANSITIONS`)."""
        return lifecycle_move(StatePass, STATE_PASS_TRANSITIONS, pk, to, **kwargs)


class SignificancePass(Leased):
    """The significance pass of one outcome's new memories (synthesis/state/significance.py):
    queued after its state pass, run once; the same lifecycle as `StatePass`."""

    outcome = models.OneToOneField(
        "synthesis.Outcome",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="significance_pass",
    )
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=8, choices=StatePassStatus.choices, default=StatePassStatus.PENDING
    )
    tries = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # The sweep's: work not ended (docs/tasks.md).
        indexes = [
            models.Index(fields=["updated_at"], name="significance_pass_live", condition=LIVE)
        ]

    def __str__(self) -> str:
        return f"significance pass {self.status}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        return lifecycle_move(SignificancePass, STATE_PASS_TRANSITIONS, pk, to, **kwargs)


class TurnStatePass(Leased):
    """The state pass of one production turn (synthesis/state/productions.py): as
    `StatePass`, run once, after the turn is finished."""

    turn = models.OneToOneField(
        "productions.Turn", primary_key=True, on_delete=models.CASCADE, related_name="state_pass"
    )
    status = models.CharField(
        max_length=8, choices=StatePassStatus.choices, default=StatePassStatus.PENDING
    )
    messages = models.JSONField(default=list, blank=True)  # what the call was sent
    tries = models.JSONField(default=list, blank=True)  # llm_structured's
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # The sweep's: work not ended (docs/tasks.md).
        indexes = [models.Index(fields=["updated_at"], name="turn_state_pass_live", condition=LIVE)]

    def __str__(self) -> str:
        return f"turn state pass {self.status}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        """A running state pass ends, done or failed (`STATE_PASS_TRANSITIONS`)."""
        return lifecycle_move(TurnStatePass, STATE_PASS_TRANSITIONS, pk, to, **kwargs)
