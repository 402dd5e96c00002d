"""The snapshot format, version 1: pydantic models that validate an import and generate
the JSON Schema published at /api/schemas/snapshot-v1.json, so the two cannot disagree.
Names, not ids: a snapshot goes into another frame or another LMiX (characters by the
name the exporter knew them by)."""

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict

from lmix.models import NAME_MAX, TEXT_MAX

from ..state.levels import MoodName

FORMAT = "lmix-snapshot"
VERSION = 1
SCHEMA_ID = "/api/schemas/snapshot-v1.json"
LIST_MAX = 1000  # entries of any one list: more is not a character, it is a mistake
LINE_MAX = 2000  # characters of one fact, one memory

Level = Literal["stranger", "acquaintance", "friend", "close friend", "soulmate"]
# Written as ISO 8601 (JSON has no time type); read strictly otherwise.
Moment = Annotated[datetime, Strict(False)]
Line = Annotated[str, Field(max_length=LINE_MAX)]


class Part(BaseModel):
    """No unknown key (a typo is named, not dropped), no coercion ("5" is not 5)."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Source(Part):
    """Where the snapshot was taken (ids of the exporting LMiX: informative only)."""

    frame: str = Field(max_length=NAME_MAX, description="The frame's name.")
    frame_id: str | None = None
    seat_id: str | None = None
    outcome_id: str | None = Field(None, description="The moment (`?at=`); null: the latest.")
    outcome_seq: int | None = None


class SnapshotInfo(Part):
    format: Literal["lmix-snapshot"]
    version: Literal[1]
    created_at: Moment
    character: str = Field(max_length=NAME_MAX, description="Whose state this is.")
    source: Source
    lmix_version: str | None = None


class PersonaTemplate(Part):
    """The template: the persona's own fields (its player may read them all)."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    known_as: str = Field("", max_length=NAME_MAX)
    universal_truth: str = Field("", max_length=TEXT_MAX)
    internal_truth: str = Field("", max_length=TEXT_MAX)
    external_truth: str = Field("", max_length=TEXT_MAX)
    style: str = Field("", max_length=TEXT_MAX)
    greeting: str = Field("", max_length=TEXT_MAX)
    example_dialogue: str = Field("", max_length=TEXT_MAX)
    tags: list[Annotated[str, Field(max_length=NAME_MAX)]] = Field([], max_length=LIST_MAX)
    avatar_url: str = Field("", max_length=1000)
    imported: dict[str, Any] = Field(
        {}, description="What an imported card or template held that no field does."
    )


class Affinity(Part):
    """How this character sees another (directed), the other by name."""

    character: str = Field(min_length=1, max_length=NAME_MAX)
    points: int = Field(ge=0, le=100, description="Affinity, 0–100.")
    level: Level
    trust: int = Field(ge=0, le=100)
    knowledge: list[Line] = Field([], max_length=LIST_MAX)


class Mood(Part):
    current: MoodName
    intensity: float = Field(ge=0.0, le=1.0)


class LearnedFact(Part):
    value: Line


class Episode(Part):
    """A memory: only ever of what this character witnessed or was told."""

    summary: Line
    significance: int = Field(ge=0, le=3, description="3 is unforgettable (pinned).")
    pinned: bool
    # A pattern, not an enum: a second choice set named `source` would rename the API's.
    source: str = Field(pattern="^(witnessed|told)$", description='"witnessed" or "told".')
    told_by: str | None = Field(None, max_length=NAME_MAX)
    reliability: float = Field(ge=0.0, le=1.0)
    witnesses: list[Annotated[str, Field(max_length=NAME_MAX)]] = Field([], max_length=LIST_MAX)
    date: Moment


class CurrentState(Part):
    affinity: list[Affinity] = Field(max_length=LIST_MAX)
    mood: Mood
    learned_facts: list[LearnedFact] = Field(max_length=LIST_MAX)
    memorable_episodes: list[Episode] = Field(max_length=LIST_MAX)


Parameters = dict[str, float]


class ActiveConfiguration(Part):
    """The personality parameters compiled (informative: recomputed on import)."""

    compiled_parameters: Parameters = Field(description="With the mood's modifiers, 0–1.")
    active_mood: str = Field(description="`current_state.mood.current`.")
    mood_modifiers: Parameters = Field(description="The mood's, scaled by its intensity.")
    toward: dict[str, Parameters] = Field(
        {}, description="Per other character: with its relationship level's modifiers too."
    )
    active_modifiers_applied: list[str] = []


class SnapshotV1(Part):
    """A character snapshot (`lmix-snapshot`, version 1)."""

    info: SnapshotInfo = Field(alias="_snapshot_info")
    persona: PersonaTemplate
    current_state: CurrentState
    active_configuration: ActiveConfiguration


def json_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of version 1."""
    schema = SnapshotV1.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "LMiX character snapshot, version 1",
    }


class FrameRef(Part):
    id: str
    name: str


class FrameSnapshot(Part):
    """A periodic snapshot of a frame (`lmix-frame-snapshot`): one `lmix-snapshot` per seat;
    each restores into its seat."""

    format: Literal["lmix-frame-snapshot"]
    version: Literal[1]
    frame: FrameRef
    seats: list[SnapshotV1]


class StoredSnapshotFile(Part):
    """A stored snapshot, downloaded: a seat's `lmix-snapshot` (the first four keys) or a
    frame's `lmix-frame-snapshot` (the last four)."""

    info: SnapshotInfo | None = Field(None, alias="_snapshot_info")
    persona: PersonaTemplate | None = None
    current_state: CurrentState | None = None
    active_configuration: ActiveConfiguration | None = None
    format: Literal["lmix-frame-snapshot"] | None = None
    version: Literal[1] | None = None
    frame: FrameRef | None = None
    seats: list[SnapshotV1] | None = None


class JsonSchemaDocument(BaseModel):
    """A JSON Schema (draft 2020-12): the published definition of a snapshot format."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(alias="$schema")
    id: str = Field(alias="$id")
    title: str
    type: str
    properties: dict[str, Any]
    required: list[str]
    defs: dict[str, Any] = Field(alias="$defs")
