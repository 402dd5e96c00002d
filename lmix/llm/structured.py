"""Structured output shared by adapters: the schema prompt, parsing text, the repair request."""

import json
import re

from pydantic import BaseModel, ValidationError

from .base import Message, T

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
# Enough of a validation error for the model to fix its answer; more only costs tokens.
DETAIL_MAX = 1500


class Unparsable(ValueError):
    """A model's output (`raw`) did not parse or validate; `detail` says why, for the repair."""

    def __init__(self, detail: str, raw: str) -> None:
        super().__init__(detail)
        self.detail = detail[:DETAIL_MAX]
        self.raw = raw


def json_schema(schema: type[BaseModel]) -> dict:
    return schema.model_json_schema()


def schema_name(schema: type[BaseModel]) -> str:
    """A name the providers accept for a schema or tool: ^[a-zA-Z0-9_-]{1,64}$."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64] or "respond"


def instruction(schema: type[BaseModel]) -> str:
    return (
        "Reply with a single JSON object and nothing else (no prose, no code fences). "
        f"It must match this JSON schema:\n{json.dumps(json_schema(schema))}"
    )


def with_instruction(messages: list[Message], schema: type[BaseModel]) -> list[Message]:
    """Add the schema instruction to the system message (some chat templates allow one, first)."""
    if messages and messages[0].role == "system":
        first = Message("system", f"{messages[0].content}\n\n{instruction(schema)}")
        return [first, *messages[1:]]
    return [Message("system", instruction(schema)), *messages]


def strip_fences(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text.strip()


def parse(text: str, schema: type[T]) -> T:
    """Validate a model's text as `schema`, tolerating code fences and chatter around the JSON."""
    candidate = strip_fences(text)
    if not candidate.startswith("{"):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start != -1 and end > start:
            candidate = candidate[start : end + 1]
    return validate(candidate, schema, raw=text)


def validate(data: str | dict, schema: type[T], raw: str | None = None) -> T:
    """`data` (JSON text, or a tool call's parsed input) as `schema`, or Unparsable."""
    try:
        if isinstance(data, str):
            return schema.model_validate_json(data)
        return schema.model_validate(data)
    except ValidationError as error:
        if raw is None:
            raw = data if isinstance(data, str) else json.dumps(data)
        raise Unparsable(str(error), raw) from None


def repair(messages: list[Message], problem: Unparsable) -> list[Message]:
    """The conversation plus the bad answer and what was wrong with it, asking for a fix."""
    return [
        *messages,
        Message("assistant", problem.raw[: DETAIL_MAX * 4] or "(empty)"),
        Message(
            "user",
            "That answer was not valid JSON for the schema:\n"
            f"{problem.detail}\n"
            "Reply again with only the corrected JSON object.",
        ),
    ]
