"""Strict reading of imported JSON: every refusal is one `ApplicationError` whose message names
the problem and the place (`data.tags[2] must be a string`), under the `file` field."""

import io
from typing import Any, NoReturn

from rest_framework.exceptions import ParseError

from lmix.errors import ApplicationError
from lmix.parsers import StrictJSONParser

FIELD = "file"


def refuse(message: str) -> NoReturn:
    raise ApplicationError(message, details={FIELD: [message]})


def json_parse(content: bytes, *, what: str = "The file") -> Any:
    """JSON bytes as data, with the API's own limits (depth, lone surrogates, NaN).

    Raises:
        ApplicationError: not UTF-8 or not JSON, saying so.
    """
    try:
        return StrictJSONParser().parse(io.BytesIO(content.removeprefix(b"\xef\xbb\xbf")))
    except ParseError as error:
        refuse(f"{what} is not valid JSON ({error.detail}).")


def no_nul(data: Any) -> None:
    """Refuses text holding a NUL character, which the database cannot store, naming where
    (`data.creator`)."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str) and "\x00" in item:
            refuse(f"{path or 'The text'} holds a NUL character.")
        elif isinstance(item, dict):
            for key, value in item.items():
                if "\x00" in key:
                    refuse(f"A key in {path or 'the file'} holds a NUL character.")
                stack.append((value, f"{path}.{key}" if path else key))
        elif isinstance(item, list):
            stack.extend((value, f"{path}[{i}]") for i, value in enumerate(item))


def obj(value: Any, path: str, *, required: bool = False) -> dict | None:
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        refuse(f"{path} must be an object." if value is not None else f"{path} is missing.")
    return value


def text(value: Any, path: str, *, limit: int | None = None, required: bool = False) -> str:
    """A string ("" when absent); `required` refuses an absent or blank one."""
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        refuse(f"{path} must be a string." if value is not None else f"{path} is missing.")
    if required and not value.strip():
        refuse(f"{path} must not be empty.")
    if limit is not None and len(value) > limit:
        refuse(f"{path} is longer than {limit} characters ({len(value)}).")
    return value


def texts(value: Any, path: str) -> list[str]:
    """A list of strings ([] when absent)."""
    if value is None:
        return []
    if not isinstance(value, list):
        refuse(f"{path} must be a list of strings.")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            refuse(f"{path}[{i}] must be a string.")
    return value


def number(value: Any, path: str) -> int | float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        refuse(f"{path} must be a number.")
    return value


def flag(value: Any, path: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        refuse(f"{path} must be true or false.")
    return value
