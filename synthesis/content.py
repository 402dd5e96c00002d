"""World content of a frame (the author face's solids): what the GM adds directly, or edits
(recorded with who and when); everyone at the table is told, and later passes gather it."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.text import has_visible_text

from .event_types import ContentChanged
from .frame_events import lock_frame, notify_frame
from .models import Content, Frame, FrameStatus

CONTENT_KEPT = 200  # the newest entries a snapshot holds


def content_body(entry: Content) -> dict[str, Any]:
    return {
        "id": str(entry.pk),
        "type": entry.type,
        "name": entry.name,
        "data": entry.data,
        "pscale": entry.pscale,
        "edited": entry.edited_at is not None,
        "source_liquid": str(entry.source_liquid_id) if entry.source_liquid_id else None,
        "created_at": entry.created_at.isoformat(),
    }


def content_recent(*, frame_id: object) -> list[dict[str, Any]]:
    """The newest CONTENT_KEPT entries, oldest first."""
    newest = Content.objects.filter(frame_id=frame_id).order_by("-created_at", "-id")
    return [content_body(c) for c in list(newest[:CONTENT_KEPT])[::-1]]


def _checked(frame: Frame, *, name: str, data: dict[str, str], type_: str, own: Content | None):
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError("This frame is closed.", status_code=409)
    if not has_visible_text(data.get("description", "")):
        raise ApplicationError(
            "Describe it: the description shows nothing.",
            details={"data": ["A description is needed."]},
        )
    same = Content.objects.filter(frame=frame, type=type_, name__iexact=name.strip())
    if own is not None:
        same = same.exclude(pk=own.pk)
    if same.exists():
        raise ApplicationError(
            f"This frame already has a {type_} called “{name.strip()}”: edit that one instead.",
            status_code=409,
        )


@transaction.atomic
def content_add(
    *, frame: Frame, user: AbstractBaseUser, type: str, name: str, data: dict[str, str], pscale: int
) -> Content:
    """The GM adds world content directly (as the author face).

    Raises:
        ApplicationError: the frame is closed or already has that entry (409), or the
            description is empty (400).
    """
    lock_frame(frame.pk)  # one entry of a name at a time
    _checked(frame, name=name, data=data, type_=type, own=None)
    entry = Content.objects.create(
        frame=frame, type=type, name=name.strip(), data=data, pscale=pscale, author=user
    )
    notify_frame(frame.pk, ContentChanged, type="content.added", content=content_body(entry))
    return entry


@transaction.atomic
def content_edit(*, entry: Content, user: AbstractBaseUser, **changes: Any) -> Content:
    """The GM edits an entry: the edit is recorded (who, when) and everyone told.

    Raises:
        ApplicationError: as `content_add`.
    """
    lock_frame(entry.frame_id)
    merged = {**{"name": entry.name, "data": entry.data, "type": entry.type}, **changes}
    _checked(entry.frame, name=merged["name"], data=merged["data"], type_=merged["type"], own=entry)
    for field, value in changes.items():
        setattr(entry, field, value.strip() if field == "name" else value)
    entry.edited_by, entry.edited_at = user, timezone.now()
    entry.save()
    notify_frame(entry.frame_id, ContentChanged, type="content.edited", content=content_body(entry))
    return entry
