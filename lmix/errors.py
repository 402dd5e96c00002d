"""One application error type, and the DRF handler that turns errors into 4xx bodies."""

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.db.models import ProtectedError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

logger = logging.getLogger(__name__)


class ApplicationError(Exception):
    """A rule of the domain was broken; the message is safe to show the user.

    Args:
        message: what is wrong, in words a user understands.
        details: optional per-field messages ({"field": ["message"]}), or one such
            dict per item of a bulk request.
        status_code: the HTTP status the API answers with (4xx).
        retry_after: whole seconds until trying again can succeed (a 429's
            `Retry-After` header).
    """

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | list[Any] | None = None,
        status_code: int = 400,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        self.status_code = status_code
        self.retry_after = retry_after


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """Answer every error with `{"detail": ..., "errors"?: {...}}` and a 4xx status."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, ProtectedError):
        users = sorted({str(obj) for obj in exc.protected_objects})[:5]
        return Response(
            {"detail": f"It is still in use by: {', '.join(users)}. Remove those first."},
            status=status.HTTP_409_CONFLICT,
        )
    elif isinstance(exc, IntegrityError):
        # A race past a service's own checks: the database constraint had the last word.
        logger.info("integrity error answered as 409: %s", type(exc).__name__)
        return Response(
            {"detail": "This conflicts with an existing record."}, status=status.HTTP_409_CONFLICT
        )
    elif isinstance(exc, ApplicationError):
        body: dict[str, Any] = {"detail": exc.message}
        if exc.details:
            body["errors"] = exc.details
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return Response(body, status=exc.status_code, headers=headers)
    elif isinstance(exc, RequestDataTooBig):
        # Django would answer its HTML 400 and log a SuspiciousOperation with its traceback
        # at ERROR: a body too large is the client's mistake, said in JSON.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {"detail": f"The request body is larger than {limit} bytes."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    elif isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)

    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        data = response.data
        # A bulk request's errors stay a list (one entry per item); other lists are general.
        bulk = isinstance(data, list) and any(isinstance(item, dict) for item in data)
        errors = data if isinstance(data, dict) or bulk else {"non_field_errors": data}
        response.data = {"detail": _first_message(data), "errors": errors}
        response.status_code = status.HTTP_400_BAD_REQUEST
    return response


def _first_message(data: Any) -> str:
    """The first human message in a nested DRF error structure."""
    if isinstance(data, dict):
        for key, value in data.items():
            message = _first_message(value)
            if message:
                return message if key == "non_field_errors" else f"{key}: {message}"
    elif isinstance(data, list):
        for item in data:
            message = _first_message(item)
            if message:
                return message
    elif data:
        return str(data)
    return "Invalid input."
