"""The snapshot routes' REST answers (lmix/answers.py). A snapshot itself is `SnapshotV1`
(schema.py)."""

from typing import Literal

from pydantic import Field

from lmix.realtime.wire import Body, Stamp, Uuid


class PersonaMade(Body):
    id: Uuid
    name: str
    created: bool = Field(description="False: one of the importer's with the same fields.")


class SnapshotImported(Body):
    """What an import restored, and what it could not place."""

    snapshot: Uuid = Field(description="The import's record.")
    seat: Uuid
    restored: list[Literal["affinity", "mood", "facts", "memories"]]
    memories: int = Field(description="Memories added (one the seat has is not doubled).")
    unknown_characters: list[str] = Field(
        description="Names in the snapshot no seat of this frame has: their parts skipped."
    )
    persona: PersonaMade | None
    warnings: list[str]


class SeatResetDone(Body):
    snapshot: Uuid = Field(description="The snapshot taken first: import it to restore.")
    seat: Uuid
    memories_cleared: int


class SnapshotRecord(Body):
    """A snapshot the frame keeps: exported, imported, taken before a reset or a rewind, or
    periodic."""

    id: Uuid
    kind: Literal["export", "import", "reset", "frame", "rewind"]
    rewind: int | None = Field(
        default=None, description="A `rewind` snapshot's rewind (the frame's rewinds list)."
    )
    seat: Uuid | None
    character: str | None
    by: str | None
    outcome_seq: int | None
    created_at: Stamp


class SnapshotList(Body):
    snapshots: list[SnapshotRecord]
