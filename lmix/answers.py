"""REST answers checked against their declared shapes: pydantic models (the socket events'
`Body`, lmix/realtime/wire.py) that the OpenAPI schema carries through drf-spectacular's
pydantic extension, so the schema, and the TypeScript `make types` generates from it, say
exactly what a view sends. A view names its shape twice, in `extend_schema(responses=…)`
and in `answer(…)`; the answer is validated, so the two cannot drift apart unnoticed."""

from typing import Any

from pydantic import BaseModel
from rest_framework import status as http_status
from rest_framework.response import Response


def answer(shape: type[BaseModel], data: Any, status: int = http_status.HTTP_200_OK) -> Response:
    """`data` as `shape` sends it: a key it does not declare, or a value of another type,
    fails here rather than in a client; optional keys that were not given stay out."""
    body = shape.model_validate(data).model_dump(mode="json", exclude_unset=True, by_alias=True)
    return Response(body, status=status)
