"""Snapshot records (issue 27, "Snapshots and interchange"): every character snapshot
exported, imported, taken before a reset, and every periodic frame snapshot, with who made
it, when, of what, and the JSON itself (synthesis/snapshots/). Registered through
synthesis/models.py, as state_models.py is; foreign keys by name (no import cycle)."""

import uuid

from django.conf import settings
from django.db import models


class SnapshotKind(models.TextChoices):
    EXPORT = "export"  # a seat's snapshot downloaded (its player's or the GM's)
    IMPORT = "import"  # a snapshot restored into a seat (the GM)
    RESET = "reset"  # the seat's state just before the GM reset it
    FRAME = "frame"  # every seat of a live frame, taken periodically
    REWIND = "rewind"  # every seat of a frame just before a rewind (`Snapshot.rewind`)


class Snapshot(models.Model):
    """One snapshot made: a seat's (`data` is one `lmix-snapshot`) or a frame's (`data`
    holds one per seat)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    frame = models.ForeignKey("synthesis.Frame", on_delete=models.CASCADE, related_name="+")
    seat = models.ForeignKey(
        "synthesis.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The moment it shows (`?at=`); None: the state as it was when it was made.
    outcome = models.ForeignKey(
        "synthesis.Outcome", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The rewind a `rewind` snapshot was taken before (synthesis/rewind.py).
    rewind = models.ForeignKey(
        "synthesis.Rewind", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=8, choices=SnapshotKind.choices)
    data = models.JSONField(default=dict, blank=True)
    # A hash of what a frame snapshot holds (not when it was made): an unchanged frame is
    # not snapshotted again.
    fingerprint = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["frame", "kind", "-created_at"], name="snapshot_frame")]

    def __str__(self) -> str:
        return f"{self.kind} snapshot {self.pk}"
