"""The API's JSON parser: a 400, never a 500, for bodies nested too deeply or not in Unicode."""

import codecs
import json
import math
import re
from itertools import accumulate
from typing import IO, Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

_ESCAPE = re.compile(r"\\.", re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")
# A \uXXXX escape in the surrogate range: only then can a parsed string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

SURROGATE_MESSAGE = (
    "JSON text holds an unpaired surrogate (\\ud800\u2013\\udfff), which is not valid Unicode."
)


def json_depth_exceeds(text: str, limit: int) -> bool:
    """Whether JSON text nests arrays/objects deeper than `limit`, found without recursion
    (and without a Python loop per character).

    Args:
        text: the JSON text, not yet parsed (it may be invalid).
        limit: the deepest nesting allowed; `[[1]]` is 2 deep, a scalar 0.
    Returns:
        True if some bracket outside a string opens level `limit + 1`.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    # With escapes gone, every quote opens or closes a string, so every other piece between
    # quotes is outside strings (an unterminated string's tail falls inside). Where the text
    # is invalid, json.loads stops at the first fault, and up to it both readings agree.
    outside = "".join(_ESCAPE.sub("", text).split('"')[0::2])
    brackets = _NOT_BRACKET.sub("", outside)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a float (1e999) is refused, not infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise ParseError("JSON holds a number too large to represent.")
    return value


def holds_lone_surrogate(data: Any) -> bool:
    """Whether any string in parsed JSON, keys included, holds an unpaired surrogate.

    Python's json joins a valid pair (`\\ud83d\\ude00`) into one code point, so any
    surrogate left in a parsed string is unpaired. Walked with a stack, not recursion.
    """
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class StrictJSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing with a ParseError (400) what would otherwise be a 500.

    A body nested deeper than `settings.LMIX_JSON_MAX_DEPTH` would make json.loads (and
    whatever walks the result) recurse until RecursionError; a lone surrogate parses but
    can be neither encoded for the database nor sent on; with STRICT_JSON, neither NaN nor
    a number that overflows to infinity gets through. Messages never echo the input.
    """

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: dict | None = None,
    ) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError:
            name = codecs.lookup(encoding).name  # the codec's own name, not the header's text
            raise ParseError(f"JSON parse error - the body is not valid {name}.") from None
        limit = settings.LMIX_JSON_MAX_DEPTH
        if json_depth_exceeds(text, limit):
            raise ParseError(f"JSON is nested deeper than {limit} levels.")
        if _SURROGATE.search(text):  # only a decoder such as utf-7 lets one through
            raise ParseError(SURROGATE_MESSAGE)
        strict = {"parse_constant": strict_constant, "parse_float": finite_float}
        try:
            data = json.loads(text, **(strict if self.strict else {}))
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if _SURROGATE_ESCAPE.search(text) and holds_lone_surrogate(data):
            raise ParseError(SURROGATE_MESSAGE)
        return data
