"""Scenes (docs/synthesis.md, "Scenes"): a frame's play cut into numbered scenes, each the
outcomes with `opened_seq < seq <= closed_seq`. Closing one queues its summaries
(synthesis/scenes/run.py): one per seat, from that character's point of view (only what it
witnessed), and one public summary from the public outcomes only, which the shared prompts
(bones, a shared frame's prose) carry. Registered through synthesis/models.py; foreign
keys by name (no import cycle)."""

import uuid

from django.db import models
from django.utils import timezone

from lmix.lifecycle import lifecycle_move
from lmix.models import Leased

from .rewind_models import Every, Visible, rewound_field

TITLE_MAX = 120


class SceneReason(models.TextChoices):
    GM = "gm"  # the GM's "Close scene"
    LOCATION = "location"  # an outcome took the characters somewhere else
    PAUSE = "pause"  # nothing happened for LMIX_SCENE_PAUSE_MINUTES


class SceneStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"


class SummaryStatus(models.TextChoices):
    NONE = "none"  # still open: nothing to summarise yet
    PENDING = "pending"  # closed, its summary task queued
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # the GM retries it


# A scene closes once; the next one opens in its place.
SCENE_TRANSITIONS: dict[str, set[str]] = {
    SceneStatus.OPEN: {SceneStatus.CLOSED},
    SceneStatus.CLOSED: {SceneStatus.OPEN},  # only a rewind to an outcome in it reopens it
}

SUMMARY_TRANSITIONS: dict[str, set[str]] = {
    SummaryStatus.NONE: {SummaryStatus.PENDING},
    SummaryStatus.PENDING: {SummaryStatus.RUNNING},
    # Back to pending: its worker's lease lapsed (a job: docs/tasks.md).
    SummaryStatus.RUNNING: {SummaryStatus.DONE, SummaryStatus.FAILED, SummaryStatus.PENDING},
    SummaryStatus.DONE: set(),
    SummaryStatus.FAILED: {SummaryStatus.PENDING},
}


class Scene(Leased):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="scenes")
    number = models.PositiveIntegerField()  # 1, 2, … in the frame
    title = models.CharField(max_length=TITLE_MAX, blank=True, default="")  # the GM's, or a place
    # The last place its outcomes stated (Outcome.location): another one closes it.
    location = models.CharField(max_length=TITLE_MAX, blank=True, default="")
    # The frame's seq when it opened: its outcomes are those numbered after it.
    opened_seq = models.BigIntegerField(default=0)
    closed_seq = models.BigIntegerField(null=True, blank=True)
    closed_reason = models.CharField(
        max_length=8, choices=SceneReason.choices, blank=True, default=""
    )
    status = models.CharField(max_length=8, choices=SceneStatus.choices, default="open")
    summary_status = models.CharField(
        max_length=8, choices=SummaryStatus.choices, default=SummaryStatus.NONE
    )
    summary = models.TextField(blank=True, default="")  # public: from public outcomes only
    summary_error = models.TextField(blank=True, default="")  # the GM's to read
    tries = models.JSONField(default=list, blank=True)  # llm_structured's, for the GM
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Hidden by a rewind to an outcome before it opened (synthesis/rewind.py: kept, restorable).
    rewound = rewound_field()

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["frame", "number"]
        # Among visible scenes only: a rewind hides scene 2, play closes scene 1 again and
        # opens another scene 2.
        constraints = [
            models.UniqueConstraint(
                fields=["frame", "number"],
                condition=models.Q(rewound__isnull=True),
                name="one_scene_number",
            ),
            models.UniqueConstraint(
                fields=["frame"],
                condition=models.Q(status="open", rewound__isnull=True),
                name="one_open_scene",
            ),
        ]
        indexes = [models.Index(fields=["summary_status", "updated_at"], name="scene_summary_due")]

    def __str__(self) -> str:
        return f"scene {self.number}"

    @staticmethod
    def move(pk: object, to: str, **kwargs) -> bool:
        """A scene closes (`SCENE_TRANSITIONS`)."""
        return lifecycle_move(Scene, SCENE_TRANSITIONS, pk, to, **kwargs)

    @staticmethod
    def summary_move(pk: object, to: str, *, where: dict | None = None, **fields) -> bool:
        """Move the summary to `to` if `SUMMARY_TRANSITIONS` allows it from where it stands
        (and the row matches `where`). Returns whether this move won."""
        sources = [s for s, targets in SUMMARY_TRANSITIONS.items() if to in targets]
        return bool(
            Scene.objects.filter(pk=pk, summary_status__in=sources, **(where or {})).update(
                summary_status=to, updated_at=timezone.now(), **fields
            )
        )


class SceneSummary(models.Model):
    """One character's summary of a closed scene: only what it witnessed. Its player's and
    the GM's to read; in that character's own prompts after the scene."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="summaries")
    seat = models.ForeignKey("synthesis.Seat", on_delete=models.CASCADE, related_name="+")
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField()  # the scene's, for ordering a seat's reads
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    # Hidden by a rewind: its scene's hidden, or reopened (synthesis/rewind.py).
    rewound = rewound_field()

    objects = Visible()
    all_objects = Every()

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(
                fields=["scene", "seat"],
                condition=models.Q(rewound__isnull=True),
                name="one_summary_per_seat",
            )
        ]
        indexes = [models.Index(fields=["seat", "-number"], name="scene_summary_seat")]

    def __str__(self) -> str:
        return self.text[:40]
