"""A frame's story as one reader may keep it (GET /api/frames/{id}/export): built from the
rows `frame_view` lets that reader read, never more. The GM's export holds every seat's
narratives and every intention; a player's the outcomes everyone sees, their own seats'
narratives (and a shared frame's) and their own intentions. The Markdown rendering is in
export_markdown.py."""

import bisect
from typing import Any

from django.utils import timezone
from django.utils.text import slugify

from .frame_events import seat_body
from .frame_selectors import FrameAccess, seats_load
from .models import Narrative, Outcome
from .selectors import (
    liquid_body,
    liquid_reading,
    liquid_seen,
    narrative_body,
    narratives_readable,
    outcome_body,
)

FILENAME_MAX = 60  # characters of the frame's name kept in a download's file name


def frame_export(access: FrameAccess) -> dict[str, Any]:
    """The reader's export of the frame (the `FrameExport` answer): its cast's public
    faces, every outcome numbered 1, 2, 3…, the narratives the reader may read in order,
    each tied to the outcomes it tells, and the reader's intentions (the GM's: all)."""
    frame = access.frame
    seats = [seat_body(seat) for seat in seats_load(frame=frame)]
    names = {seat["id"]: seat["name"] for seat in seats}
    outcomes = Outcome.objects.filter(frame=frame).order_by("seq")
    if not access.is_gm:  # a held outcome is the GM's until released (the GM's is marked)
        outcomes = outcomes.filter(held=False)
    outcomes = list(outcomes)
    numbers = {str(o.pk): number for number, o in enumerate(outcomes, start=1)}
    times = [o.created_at for o in outcomes]
    liquid = liquid_seen(access).order_by("submitted_at", "id")
    if not access.is_gm:  # a player keeps their own intentions, not what others intend
        liquid = liquid.filter(seat_id__in=access.seat_ids)
    return {
        "frame": str(frame.pk),
        "name": frame.name,
        "production_name": frame.production.name,
        "status": frame.status,
        "mode": frame.mode,
        "exported_at": timezone.now().isoformat(),
        "reader": "gm" if access.is_gm else "player",
        "my_seats": sorted(str(seat_id) for seat_id in access.seat_ids),
        "seats": seats,
        "outcomes": [
            {**outcome_body(o, gm=access.is_gm), "number": numbers[str(o.pk)]} for o in outcomes
        ],
        "narratives": [
            _narrative(n, names=names, numbers=numbers, times=times)
            for n in narratives_readable(access)
        ],
        "intentions": [
            liquid_body(x, reading) for x in liquid if (reading := liquid_reading(access, x))
        ],
    }


def _narrative(
    narrative: Narrative, *, names: dict[str, str], numbers: dict[str, int], times: list[Any]
) -> dict[str, Any]:
    """A narrative with whose story it is and where it stands in the story: after the last
    outcome it tells, or, telling none the frame holds, after the outcomes before it."""
    told = sorted(numbers[str(x)] for x in narrative.outcome_ids if str(x) in numbers)
    after = told[-1] if told else bisect.bisect_right(times, narrative.created_at)
    return {
        **narrative_body(narrative),
        "character": names.get(str(narrative.seat_id), "Someone"),
        "player": narrative.user.username if narrative.user_id else None,
        "outcomes": told,
        "after_outcome": after,
    }


def export_filename(export: dict[str, Any], extension: str) -> str:
    """A download's file name from the frame's name, safe in any file system and header:
    ASCII letters, digits and dashes, then whose story it is."""
    name = slugify(export["name"])[:FILENAME_MAX].strip("-") or "scene"
    if export["reader"] == "gm":
        return f"{name}-scene.{extension}"
    mine = [s["name"] for s in export["seats"] if s["id"] in export["my_seats"]]
    who = slugify(mine[0])[:FILENAME_MAX].strip("-") if len(mine) == 1 else ""
    return f"{name}-{who or 'story'}.{extension}"
