"""Structured output shared by adapters: the schema prompt, parsing text, the repair request."""

import json
import re

from pydantic import BaseModel, ValidationError

from . import bounds
from .base import Message, StructuredMode, T

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
# Enough of a validation error for the model to fix its answer; more only costs tokens.
DETAIL_MAX = 1500


# Short enough for a failure banner; it names what was wrong, never the prompt.
SUMMARY_MAX = 160
# The modes a model may be remembered by (LLMModel.config["structured_mode"]).
STORED_MODES: tuple[StructuredMode, ...] = (
    "json_schema",
    "grammar",
    "json_object",
    "prompt",
    "tool",
)
# The modes whose prompt carries the schema; a tool carries it itself.
_INSTRUCTED = frozenset({"json_schema", "grammar", "json_object", "prompt"})
# What a grammar compiler (llama.cpp's) is given of a schema: structure only. Length and
# pattern keywords crashed llama-cpp-python's server (maxLength); names and prose are
# for the prompt.
_GRAMMAR_KEYS = frozenset(
    {
        "type", "properties", "required", "items", "prefixItems", "minItems", "maxItems",
        "enum", "const", "additionalProperties", "anyOf", "oneOf", "allOf",
    }
)  # fmt: skip


class Unparsable(ValueError):
    """A model's output (`raw`) did not parse or validate, or was refused by a caller's
    check; `detail` says why, for the repair, `summary` in one short line, for people."""

    def __init__(self, detail: str, raw: str, summary: str = "") -> None:
        super().__init__(detail)
        self.detail = detail[:DETAIL_MAX]
        self.raw = raw
        first = (summary or detail).strip().splitlines()
        self.summary = (first[0] if first else "invalid answer")[:SUMMARY_MAX]


def json_schema(schema: type[BaseModel], wire: dict | None = None) -> dict:
    """The JSON schema a call sends: `wire` (a tighter one for this call, e.g. its exact
    names) when given, else the model's own. The answer is validated as `schema` either way."""
    return wire if wire is not None else schema.model_json_schema()


def grammar_schema(schema: dict) -> dict:
    """`schema` as a grammar compiler takes it: references inlined, structural keywords only."""
    definitions = schema.get("$defs", {})

    def plain(node: object) -> object:
        if isinstance(node, list):
            return [plain(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return plain(definitions[node["$ref"].rsplit("/", 1)[-1]])
        kept = {key: value for key, value in node.items() if key in _GRAMMAR_KEYS}
        if isinstance(kept.get("properties"), dict):
            kept["properties"] = {name: plain(sub) for name, sub in kept["properties"].items()}
        for key in ("items", "prefixItems", "anyOf", "oneOf", "allOf"):
            if key in kept:
                kept[key] = plain(kept[key])
        return kept

    return plain(schema)  # type: ignore[return-value]


def schema_name(schema: type[BaseModel]) -> str:
    """A name the providers accept for a schema or tool: ^[a-zA-Z0-9_-]{1,64}$."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64] or "respond"


def instruction(schema: type[BaseModel], wire: dict | None = None) -> str:
    return (
        "Reply with a single JSON object and nothing else (no prose, no code fences). "
        f"It must match this JSON schema:\n{json.dumps(json_schema(schema, wire))}"
    )


def tool_definition(schema: type[BaseModel], wire: dict | None = None) -> dict:
    """The tool a structured call forces (Anthropic), its input the schema."""
    return {
        "name": schema_name(schema),
        "description": f"Give the answer as a {schema.__name__}.",
        "input_schema": json_schema(schema, wire),
    }


def conversation(
    mode: StructuredMode,
    messages: list[Message],
    schema: type[BaseModel],
    wire: dict | None = None,
) -> list[Message]:
    """The messages a structured call in `mode` sends: with the schema instruction unless a
    tool (or the offline narrator) takes the schema itself."""
    return with_instruction(messages, schema, wire) if mode in _INSTRUCTED else list(messages)


def with_instruction(
    messages: list[Message], schema: type[BaseModel], wire: dict | None = None
) -> list[Message]:
    """Add the schema instruction to the system message (some chat templates allow one, first)."""
    text = instruction(schema, wire)
    if messages and messages[0].role == "system":
        first = Message("system", f"{messages[0].content}\n\n{text}")
        return [first, *messages[1:]]
    return [Message("system", text), *messages]


def strip_fences(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text.strip()


def parse(text: str, schema: type[T], repairs: list[dict] | None = None) -> T:
    """Validate a model's text as `schema`, tolerating code fences and chatter around the
    JSON, and numbers out of their bounds (clamped, each noted in `repairs`: see `validate`)."""
    if not text.strip():
        raise Unparsable("empty answer", text)
    candidate = strip_fences(text)
    if not candidate.startswith("{"):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start != -1 and end > start:
            candidate = candidate[start : end + 1]
    return validate(candidate, schema, raw=text, repairs=repairs)


def validate(
    data: str | dict,
    schema: type[T],
    raw: str | None = None,
    repairs: list[dict] | None = None,
) -> T:
    """`data` (JSON text, or a tool call's parsed input) as `schema`, or Unparsable.

    An answer refused only for numbers outside their fields' bounds is read with each
    clamped into them (lmix/llm/bounds.py): a repair, not a failure. Each one is appended
    to `repairs` when given, as {"path", "given", "used"}."""
    if isinstance(data, str):
        data = _loose_json(data)
    try:
        if isinstance(data, str):
            return schema.model_validate_json(data)
        return schema.model_validate(data)
    except ValidationError as error:
        if raw is None:
            raw = data if isinstance(data, str) else json.dumps(data)
        problem = error
    fixed, changes = bounds.clamped(data, problem, schema)
    if changes:
        try:
            answer = schema.model_validate(fixed)
        except ValidationError as error:
            problem = error  # what is still wrong once the numbers are in range
        else:
            if repairs is not None:
                repairs.extend(changes)
            return answer
    raise Unparsable(str(problem), raw, _summary(problem))


def _loose_json(text: str) -> str | object:
    """JSON that only a strict parser refuses (a raw newline or tab inside a string, as a
    small model under a grammar writes them), parsed; anything else as it was, for the
    schema's own parser to judge."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        return text


def _summary(error: ValidationError) -> str:
    """The first problem, as `where: what` (pydantic's own text shows the input too)."""
    problems = error.errors(include_url=False, include_input=False)
    if not problems:
        return "invalid answer"
    first = problems[0]
    where = ".".join(map(str, first["loc"]))
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


def repair(messages: list[Message], problem: Unparsable) -> list[Message]:
    """The conversation plus the bad answer and what was wrong with it, asking for a fix."""
    return [
        *messages,
        Message("assistant", problem.raw[: DETAIL_MAX * 4] or "(empty)"),
        Message(
            "user",
            "That answer was not valid:\n"
            f"{problem.detail}\n"
            "Reply again with only the corrected JSON object.",
        ),
    ]
