"""Socket events as pydantic models: the one contract the server builds, the tests check
and the frontend's types are generated from (`make types`). Each model is exactly its wire
dict: `extra="forbid"`, strict types (no coercion changes what is sent), and a field left
out when it was not given (`wire`). The apps' events: productions/event_types.py,
synthesis/event_types.py; who receives which: docs/realtime.md.
"""

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

Uuid = str
Stamp = str  # an ISO 8601 time, as the REST answers write it


def optional(schema: dict[str, Any] | None = None) -> Any:
    """A field left out of the dict when not given (never sent as null): optional in the
    generated TypeScript, not nullable. `schema`: its JSON Schema where the Python type says
    less (a stored model answer)."""
    return Field(default=None, json_schema_extra=schema)


def json_object(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an object with these properties, `required` among them: how a
    stored JSON value's shape is described to the generated types (`optional`, `stored`)."""
    return {"type": "object", "properties": properties, "required": required}


def object_of_strings(*names: str) -> dict[str, Any]:
    """The JSON Schema of an object of these string keys, all required."""
    return json_object(list(names), **{name: {"type": "string"} for name in names})


def _untitled(schema: dict[str, Any]) -> None:
    """A property's title only repeats its name (and would make a type of its own in the
    generated TypeScript)."""
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)


class Body(BaseModel):
    """A part of an event or a REST answer: no unknown key, no coercion."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_untitled)


# Which of a frame's groups an event goes to (synthesis/frame_events.py): the frame
# group (every GM's and player's socket), the spectators', a seat's (its player), the GM's.
Audience = Literal["frame", "spectators", "seat", "gm"]


class Event(Body):
    # Who hears it; docs/realtime.md's audience table is tested against it. A production's
    # events go to its one group.
    audiences: ClassVar[tuple[Audience, ...]] = ()
    type: str

    def wire(self) -> dict[str, Any]:
        """The dict that goes on the channel layer: built once, JSON types only; optional
        fields that were not given are left out, as the old dicts did."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


def fast_wire(event_type: type[Event], **fields: Any) -> dict[str, Any]:
    """A streamed delta's dict, unvalidated (one per token: the hot path, where building
    the model would cost ten times the dict). Give every field of `event_type`, in its
    order; tests/test_event_contract.py checks what the callers build against it."""
    return fields
