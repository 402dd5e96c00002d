"""Numbers of a structured answer outside their field's bounds, clamped into them.

A small model asked for a window of at most 3600 s answers 10000, or 0 where it must be
more than 0: it meant "as long as can be" and "at once", and the nearest allowed value
keeps that meaning. So before such an answer counts as a failure (structured.validate), each
number a bound refused (pydantic's ge, gt, le, lt, wherever the field sits: a nested model,
a list, a dict) is set to the nearest value inside and the answer validated again; the
repairs are reported as {"path", "given", "used"}.

Text longer than its field's max_length is not cut: a cut sentence says less than the
model meant and a cut name (an entry `extends`, say) names something else, so that answer
goes back to the model once instead, which can shorten it whole.
"""

import copy
import math
from typing import Any

from pydantic import BaseModel, PydanticUserError, ValidationError

# pydantic's error type for a refused bound → the bound's name in the error's context.
_BOUND_ERRORS = {
    "greater_than": "gt",
    "greater_than_equal": "ge",
    "less_than": "lt",
    "less_than_equal": "le",
}
# The JSON schema's name of each bound (what the model was shown).
_SCHEMA_BOUNDS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
}
_OPPOSITE = {"gt": ("le", "lt"), "ge": ("le", "lt"), "lt": ("ge", "gt"), "le": ("ge", "gt")}

Repair = dict[str, Any]


def clamped(
    data: object, error: ValidationError, schema: type[BaseModel]
) -> tuple[object, list[Repair]]:
    """`data` (an answer as parsed from JSON) with each number `error` found out of its
    bounds set to the nearest value inside, and what was changed; `data` itself is left
    as it was. No repairs: nothing `error` names could be clamped."""
    problems = [p for p in error.errors(include_url=False) if p["type"] in _BOUND_ERRORS]
    if not problems:
        return data, []
    repaired = copy.deepcopy(data)
    fields: dict[str, Any] | None = None  # the JSON schema, read only when a bound needs it
    repairs: list[Repair] = []
    for problem in problems:
        given = _number(problem["input"])
        slot = _slot(repaired, problem["loc"])
        if given is None or slot is None:
            continue
        name = _BOUND_ERRORS[problem["type"]]
        bound = problem.get("ctx", {}).get(name)
        if name in ("gt", "lt") and fields is None:
            fields = _fields(schema)
        used = _inside(name, bound, _opposite(fields, problem["loc"], name))
        if used is None:
            continue
        container, key = slot
        container[key] = used
        repairs.append({"path": _path(problem["loc"]), "given": given, "used": used})
    return repaired, repairs


def _fields(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema's JSON schema, for the bounds it declares (none if it has none to give)."""
    try:
        return schema.model_json_schema()
    except PydanticUserError:
        return {}


def _number(value: object) -> int | float | None:
    """The number the model wrote (a JSON number, or one in a string pydantic read as
    one); none for anything else, and for NaN and infinities, which JSON has no room for
    (nor the try that records them)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return None
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return None


def _slot(data: object, loc: tuple[int | str, ...]) -> tuple[Any, int | str] | None:
    """The container and key that hold the value at `loc`; none when `loc` does not lead
    through the data (a union's member name is a step of its own in pydantic's loc)."""
    if not loc:
        return None
    node = data
    for step in loc[:-1]:
        node = _child(node, step)
        if node is None:
            return None
    last = loc[-1]
    return (node, last) if _child(node, last) is not None else None


def _child(node: object, step: int | str) -> Any:
    if isinstance(node, dict) and isinstance(step, str):
        return node.get(step)
    if isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
        return node[step]
    return None


def _inside(name: str, bound: object, opposite: int | float | None) -> int | float | None:
    """The value nearest `bound` that the field takes. pydantic gives an int field's bound
    as an int and a float field's as a float, so the bound's type is the field's."""
    if isinstance(bound, bool) or not isinstance(bound, int | float):
        return None
    if name in ("ge", "le"):
        return bound
    inward = 1 if name == "gt" else -1
    if isinstance(bound, int):
        return bound + inward  # the next whole number: all an int field takes
    # A float's next representable value is as good as the bound it may not be (a window
    # of 5e-324 s). One unit (a second, a point: what our fields count in) is the smallest
    # step a model's answer means; a range narrower than 100 units gets 1% of its span, so
    # the value stays near the edge the model was at.
    step = 1.0 if opposite is None else min(1.0, abs(opposite - bound) / 100)
    return bound + inward * step


def _opposite(
    fields: dict[str, Any] | None, loc: tuple[int | str, ...], name: str
) -> int | float | None:
    """The field's bound on the other side from the JSON schema, if it declares one."""
    node = _schema_at(fields, loc) if fields is not None else None
    if node is None:
        return None
    for other in _OPPOSITE[name]:
        value = node.get(_SCHEMA_BOUNDS[other])
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    return None


def _schema_at(fields: dict[str, Any], loc: tuple[int | str, ...]) -> dict[str, Any] | None:
    """The JSON schema node of the value at `loc` (through references, lists, dicts and
    an optional's non-null branch); none when the path cannot be followed."""
    definitions = fields.get("$defs", {})
    node: dict[str, Any] | None = fields
    for step in loc:
        node = _resolved(node, definitions)
        if node is None:
            return None
        if isinstance(step, int):
            node = node.get("items")
        else:
            properties = node.get("properties", {})
            node = properties.get(step, node.get("additionalProperties"))
        if not isinstance(node, dict):
            return None
    return _resolved(node, definitions)


def _resolved(node: dict[str, Any] | None, definitions: dict[str, Any]) -> dict[str, Any] | None:
    """`node` itself: a reference followed, an optional's one non-null branch taken."""
    if node is None:
        return None
    if "$ref" in node:
        return _resolved(definitions.get(node["$ref"].rsplit("/", 1)[-1]), definitions)
    branches = [b for b in node.get("anyOf", []) if b.get("type") != "null"]
    if len(branches) == 1:
        return _resolved(branches[0], definitions)
    return node


def _path(loc: tuple[int | str, ...]) -> str:
    """Where a value sits, as a validation error's summary names it: `beats.0.seconds`."""
    return ".".join(map(str, loc))
