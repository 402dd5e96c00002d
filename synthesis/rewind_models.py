"""Rewind's records (docs/synthesis.md, "Rewind and regenerate"): a `Rewind` row hides
everything of a frame after one of its outcomes, kept and restorable. The rows it hides
point at it (`rewound`); their default manager (`Visible`) never reads them, so no
prompt, answer, export or socket view can, whoever queries them. Registered through
synthesis/models.py; foreign keys by name (no import cycle)."""

from django.conf import settings
from django.db import models


class Visible(models.Manager):
    """Rows no rewind hides: the default manager of every row a rewind can hide. Code
    that must see hidden rows (the rewind itself) reads `all_objects`."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(rewound__isnull=True)


class Every(models.Manager):
    """Every row, the hidden ones too: only rewind's own code reads them."""


def rewound_field() -> models.ForeignKey:
    """The rewind that hides a row (null: visible). RESTRICT: a rewind is never deleted
    while it hides rows (that would show them again), but goes with its frame."""
    return models.ForeignKey(
        "synthesis.Rewind", null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )


class RewindKind(models.TextChoices):
    REWIND = "rewind"  # the GM rewound the frame to an outcome
    REGENERATE = "regenerate"  # the GM regenerated an outcome: it and what followed went
    RESTORE = "restore"  # restoring a rewind hid what was played since it


class Rewind(models.Model):
    """One rewind of a frame: what it hid (rows pointing at it), the state of every seat
    just before (`before`, the fold of the visible deltas: the pre-rewind record), and
    whether it was restored."""

    id = models.BigAutoField(primary_key=True)  # a frame's rewinds in order
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="rewinds")
    kind = models.CharField(max_length=12, choices=RewindKind.choices, default=RewindKind.REWIND)
    # Everything after the outcome numbered `to_seq` was hidden (0: every outcome).
    to_seq = models.BigIntegerField()
    to_outcome = models.ForeignKey(
        "synthesis.Outcome", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    seq = models.BigIntegerField()  # the frame's seq of its `frame.rewound` event
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    counts = models.JSONField(default=dict)  # kind → rows hidden
    before = models.JSONField(default=dict)  # seat id → its state as the fold gave it
    # A regenerate's edited inputs: [{liquid, seat, before, after}] (who: `by`, when: created_at).
    edits = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    restored_seq = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["frame", "seq"], name="rewind_frame_seq")]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to_seq}"
